// Draws the view s1race.views.view_race returns: the track from 1 to the goal, each cell coloured by who
// reached it, the last moves outlined, the result and the last feedback.
// The replay page (s1gym's replay.js) calls window.S1Views[view.kind](view, box, tick, ui) for each position
// it shows: fill the element box; ui holds the page's helpers (ui.el(tag, class, text) makes an element).
(function () {
  "use strict";
  (window.S1Views = window.S1Views || {}).race = function (v, box, _tick, { el }) {
    const card = el("div", "race");
    card.appendChild(el("div", "race-head", `total ${v.total} of ${v.goal} (${v.goal - v.total} to go)`));
    const owner = new Array(v.goal + 1).fill("");
    const recent = new Array(v.goal + 1).fill(false);
    let at = 0;
    v.steps.forEach(([who, added], i) => {
      for (let k = 0; k < added && at < v.goal; k++) {
        at += 1;
        owner[at] = who;
        recent[at] = i >= v.steps.length - v.last;
      }
    });
    const track = el("div", "race-track");
    for (let n = 1; n <= v.goal; n++) {
      const cls = ["race-cell", owner[n] && "race-" + owner[n], recent[n] && "race-recent",
                   n === v.goal && "race-goal", (v.goal - n) % 4 === 0 && "race-four"].filter(Boolean);
      track.appendChild(el("span", cls.join(" "), String(n)));
    }
    card.appendChild(track);
    const key = el("div", "race-key");
    key.appendChild(el("span", "race-cell race-you", "you"));
    key.appendChild(el("span", "race-cell race-house", "house"));
    key.appendChild(el("span", "race-cell race-four", "4k to go"));
    card.appendChild(key);
    if (v.result) card.appendChild(el("div", "race-result " + v.result, v.result === "won" ? "you win" : "the house wins"));
    if (v.said) card.appendChild(el("pre", "race-said", v.said));
    box.appendChild(card);
  };
})();
