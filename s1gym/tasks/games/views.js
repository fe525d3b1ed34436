// The games' replay views (s1gym/tasks/games/views.py parses them): 2048's board, Blackjack's table, the
// Millionaire quiz card and ladder. Each drawer is registered for the page's script (replay.js) as
// window.S1Views[kind] = function (view, box, tick, ui): it fills the element box with the view; tick is
// the decision shown (null at the end and while the player thinks); ui holds the page's helpers: el(tag,
// class, text), S(index) (a text of the page's string table) and money(n).
(function () {
  "use strict";
  const VIEWS = (window.S1Views = window.S1Views || {});

  function draw2048(v, box, tick, { el, S }) {
    const stats = el("div", "stats2048");
    for (const [k, val] of [["score", v.score], ["largest", v.max_tile], ["move", `${v.move}`]]) {
      const d = el("div", null, k);
      d.appendChild(el("b", null, String(val)));
      stats.appendChild(d);
    }
    box.appendChild(stats);
    const g = el("div", "g2048 board");
    for (const row of v.board) for (const x of row) {
      const t = el("div", "tile" + (x ? (x > 2048 ? " vbig" : " v" + x) : ""), x ? String(x) : "");
      t.dataset.value = String(x);
      g.appendChild(t);
    }
    box.appendChild(g);
    if (S(v.note)) box.appendChild(el("div", "note", S(v.note)));
  }

  function hand(cards, el) {
    const h = el("div", "hand");
    for (const c of cards) {
      const d = el("div", c === "?" ? "card back" : "card", c === "?" ? "" : c);
      d.dataset.card = c;
      h.appendChild(d);
    }
    return h;
  }
  function drawBlackjack(v, box, tick, { el, S }) {
    const f = el("div", "felt");
    const dh = el("h3", null, "Dealer");
    dh.appendChild(el("span", "total", v.dealer_total));
    f.appendChild(dh);
    const d = hand(v.dealer, el); d.classList.add("dealer"); f.appendChild(d);
    const ph = el("h3", null, "Player");
    ph.appendChild(el("span", "total", v.player_total));
    f.appendChild(ph);
    const p = hand(v.player, el); p.classList.add("player"); f.appendChild(p);
    if (v.result) f.appendChild(el("div", "result", v.result));
    box.appendChild(f);
    if (S(v.note)) box.appendChild(el("div", "note", S(v.note)));
  }

  function drawMillionaire(v, box, tick, { el, money }) {
    const q = el("div", "quiz");
    const card = el("div", "qcard");
    if (v.number) {
      card.appendChild(el("div", "qmeta", `Question ${v.number} of ${v.ladder.length} for ${money(v.prize)} · ${v.difficulty} · ${v.category}`));
      card.appendChild(el("div", "question", v.question));
      const grid = el("div", "answers");
      const chosen = tick ? tick.move : v.chosen;
      v.answers.forEach((a, i) => {
        const d = el("div", "answer");
        d.appendChild(el("b", null, "ABCD"[i] + ":"));
        d.appendChild(document.createTextNode(v.removed.includes(a) ? "" : a));
        if (v.removed.includes(a)) d.classList.add("removed");
        if (v.right !== undefined) {
          if (a === v.right) d.classList.add("right");
          else if (a === chosen) d.classList.add("wrong");
        } else if (a === chosen) d.classList.add("chosen");
        d.dataset.answer = a;
        grid.appendChild(d);
      });
      card.appendChild(grid);
    }
    if (v.over) card.appendChild(el("div", "over", `Game over (${v.over}): ${money(v.winnings)}`));
    const life = el("div", "lifelines");
    life.appendChild(el("span", "life" + (v.fifty_fifty ? "" : " used"), "50:50"));
    life.appendChild(el("span", "life" + (tick && tick.move === "walk away" ? " chosen" : ""), "walk away"));
    life.appendChild(el("span", null, `winnings ${money(v.winnings)}` + (v.safe != null ? ` · safe ${money(v.safe)}` : "")));
    card.appendChild(life);
    q.appendChild(card);
    const lad = el("div", "ladder");
    for (let k = v.ladder.length; k >= 1; k--) {
      let cls = "rung";
      if (v.havens.includes(k)) cls += " haven";
      if (!v.over && k === v.number) cls += " now";
      else if (v.winnings >= v.ladder[k - 1] && v.winnings > 0) cls += " won";
      const r = el("div", cls);
      r.appendChild(el("span", null, String(k)));
      r.appendChild(el("span", null, money(v.ladder[k - 1])));
      lad.appendChild(r);
    }
    q.appendChild(lad);
    box.appendChild(q);
  }

  VIEWS["2048"] = draw2048;
  VIEWS.blackjack = drawBlackjack;
  VIEWS.millionaire = drawMillionaire;
})();
