// s1gym replay page: draws one or two trials side by side from the JSON block #replay-data.
// Positions: in step mode an integer (decision index; the last one is the end), in time mode seconds
// on each episode's own clock. window.replay = {show, setMode, setSpeed, schedule, state}.
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("replay-data").textContent);
  const STR = DATA.strings;
  const S = (i) => (i == null || i < 0 ? "" : STR[i]);
  const trials = DATA.trials;
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  };
  const fmtS = (s) => (s == null ? "-" : s < 0.001 ? Math.round(s * 1e6) + " µs" : s < 1 ? (s * 1000).toFixed(1) + " ms" : s.toFixed(2) + " s");
  const fmtP = (p) => (p >= 0.995 ? "1.00" : p.toFixed(2));
  const money = (n) => "$" + Number(n).toLocaleString("en-US");

  let mode = DATA.mode;
  const speed = Object.assign({}, DATA.speed);
  let pos = 0;
  let playing = false;
  const lastStep = () => Math.max(...trials.map((t) => t.ticks.length));
  const lastTime = () => Math.max(...trials.map((t) => t.end.clock));

  // ------------------------------------------------------------------ layout
  const app = document.getElementById("app");
  const header = el("header");
  header.appendChild(el("h1", null, DATA.title));
  const controls = el("div", "controls");
  const btn = (label, title, fn) => {
    const b = el("button", null, label);
    b.title = title;
    b.addEventListener("click", fn);
    controls.appendChild(b);
    return b;
  };
  btn("« start", "start", () => { stop(); show(0); });
  btn("‹ prev", "previous decision (←)", () => { stop(); stepBy(-1); });
  const playBtn = btn("play ▶", "play / pause (space)", () => (playing ? stop() : play()));
  btn("next ›", "next decision (→)", () => { stop(); stepBy(1); });
  btn("end »", "end", () => { stop(); show(mode === "step" ? lastStep() : lastTime()); });
  const modeSel = el("select");
  modeSel.title = "time: each episode on its own clock (latency included); step: decision by decision";
  for (const m of ["time", "step"]) {
    const o = el("option", null, m === "time" ? "time (own clock)" : "step by step");
    o.value = m;
    modeSel.appendChild(o);
  }
  modeSel.value = mode;
  modeSel.addEventListener("change", () => setMode(modeSel.value));
  controls.appendChild(modeSel);
  const speedIn = el("input");
  speedIn.type = "number";
  speedIn.step = "any";
  speedIn.min = "0";
  speedIn.addEventListener("change", () => setSpeed(parseFloat(speedIn.value)));
  const speedLabel = el("span", "where");
  speedLabel.style.minWidth = "auto";
  controls.appendChild(speedIn);
  controls.appendChild(speedLabel);
  const slider = el("input");
  slider.type = "range";
  slider.min = "0";
  slider.addEventListener("input", () => { stop(); show(mode === "step" ? parseInt(slider.value, 10) : (parseFloat(slider.value) / 1000) * lastTime()); });
  controls.appendChild(slider);
  const where = el("span", "where");
  controls.appendChild(where);
  header.appendChild(controls);
  app.appendChild(header);

  const stage = el("main");
  stage.id = "stage";
  const panels = trials.map((tr, k) => {
    const p = el("section", "panel");
    p.dataset.trial = String(k);
    const head = el("div", "phead");
    const left = el("div");
    left.appendChild(el("div", "who", tr.label));
    left.appendChild(el("div", "sub", `${tr.task} · seed ${tr.seed} · ${tr.job}/${tr.trial}`));
    const status = el("div", "status");
    head.appendChild(left);
    head.appendChild(status);
    const view = el("div", "view");
    const decision = el("div", "decision");
    p.appendChild(head);
    p.appendChild(view);
    p.appendChild(decision);
    stage.appendChild(p);
    return { p, status, view, decision, tr };
  });
  app.appendChild(stage);
  const footer = el("footer");
  const b = DATA.bounds;
  const sampled = trials.filter((t) => t.sampled).map((t) => `${t.label}: ${t.ticks.length} of ${t.n_ticks} decisions shown, evenly spaced`);
  footer.textContent = `Bounds: at most ${b.max_ticks} decisions per trial, texts cut at ${b.max_text} characters, ` +
    `top ${b.top_k} candidates named (with the chosen move and, ★, the task expert's where it has one), ` +
    `screenshots at most ${b.frame_width} px wide.` + (sampled.length ? " " + sampled.join("; ") + "." : "");
  app.appendChild(footer);

  // ------------------------------------------------------------------ where is each trial
  function locate(tr, p) {
    const n = tr.ticks.length;
    if (mode === "step") return { i: Math.min(Math.max(0, Math.round(p)), n), thinking: false };
    if (n === 0 || p >= tr.end.clock) return { i: n, thinking: false };
    let lo = 0, hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (tr.ticks[mid].clock <= p) lo = mid; else hi = mid - 1;
    }
    const tk = tr.ticks[lo];
    return { i: lo, thinking: p < tk.clock + tk.lat };
  }

  // ------------------------------------------------------------------ views
  // A family's drawers (inlined before this script) are window.S1Views[kind](view, box, tick, ui); the
  // transcript and screenshot views are the page's own.
  const VIEWS = window.S1Views || {};
  const ui = { el, S, money };
  function transcriptBox(tr, i) {
    const t = el("div", "transcript");
    if (i === 0) t.appendChild(el("div", "fb", "(the start: no move yet)"));
    const from = Math.max(0, i - 60);
    if (from > 0) t.appendChild(el("div", "fb", `… ${from} earlier moves`));
    for (let j = from; j < i && j < tr.ticks.length; j++) {
      const tk = tr.ticks[j];
      const mv = el("div", "mv", `> ${tk.move}`);
      t.appendChild(mv);
      t.appendChild(el("div", "fb", S(tk.fb)));
    }
    return t;
  }
  function drawTranscript(tr, i, v, box) {
    const now = el("div", "now", S(v.now));
    box.appendChild(now);
    now.scrollTop = now.scrollHeight; // the scene and inventory close the text; the task opens it
    const t = transcriptBox(tr, i);
    box.appendChild(t);
    return t;
  }
  function drawScreenshot(tr, i, v, box) {
    if (S(v.now)) box.appendChild(el("div", "now", S(v.now))); // its top: the goal (the picture shows the rest)
    const img = el("img", "shot");
    img.src = v.img;
    img.alt = `screenshot before decision ${i + 1}`;
    box.appendChild(img);
    const t = transcriptBox(tr, i);
    box.appendChild(t);
    return t;
  }

  // ------------------------------------------------------------------ decision panel
  function drawDecision(tr, i, thinking, box, p) {
    box.className = "decision" + (thinking ? " thinking" : "");
    if (i >= tr.ticks.length) {
      const e = tr.end;
      const f = el("div", "final");
      f.appendChild(el("div", "outcome " + e.outcome, `Final: ${e.verdict}`));
      f.appendChild(el("div", null, `score ${e.score == null ? "-" : e.score.toFixed(3)} · ${e.steps} steps · ${fmtS(e.clock)} of play`));
      if (!e.known) f.appendChild(el("div", "note", "(this file does not record the final state; the last state seen is shown)"));
      if (e.error) f.appendChild(el("div", "err", e.error));
      box.appendChild(f);
      box.dataset.tick = "end";
      return;
    }
    const tk = tr.ticks[i];
    box.dataset.tick = String(tk.t);
    const line = el("div", "dline");
    line.appendChild(el("span", "tick", `decision ${tk.t + 1} of ${tr.n_ticks} · ${tk.n} candidates`));
    line.appendChild(el("span", "tick", `score ${tk.score == null ? "-" : tk.score.toFixed(3)}` + (tk.reward ? ` (${tk.reward > 0 ? "+" : ""}${tk.reward.toFixed(3)})` : "")));
    box.appendChild(line);
    // While the policy thinks, its running time and the whole think take the chosen move's line (and only
    // that line): a GIF frame may stand for a long think (schedule caps its hold), the numbers say how long.
    const row = el("div", "move-row");
    row.appendChild(el("div", "chosen-move move", `→ ${tk.move}`));
    row.appendChild(el("div", "thinking-label", `deciding… ${fmtS(Math.max(0, p - tk.clock))} of ${fmtS(tk.lat)}`));
    box.appendChild(row);
    const bars = el("div", "bars");
    for (const [name, prob, idx] of tk.top) {
      const r = el("div", "bar" + (idx === tk.action ? " chosen" : "") + (idx === tk.expert ? " expert" : ""));
      r.dataset.p = String(prob);
      r.dataset.name = name;
      const label = el("span", "name", name);
      if (idx === tk.expert) { label.title = "the expert's move"; label.prepend(el("span", "expert-mark", "★ ")); }
      r.appendChild(label);
      const track = el("span", "track");
      const fill = el("span", "fill");
      fill.style.display = "block";
      fill.style.width = (100 * prob).toFixed(1) + "%";
      track.appendChild(fill);
      r.appendChild(track);
      r.appendChild(el("span", "p", fmtP(prob)));
      bars.appendChild(r);
    }
    if (tk.others) bars.appendChild(el("div", "others", tk.others[1] > 0 ? `+ ${tk.others[0]} more: ${fmtP(tk.others[1])} together` : `+ ${tk.others[0]} more at probability 0`));
    box.appendChild(bars);
    let meta = `latency ${fmtS(tk.lat)} · clock ${fmtS(tk.clock + tk.lat)}`;
    if (tk.tokens[0] || tk.tokens[1]) meta += ` · tokens ${tk.tokens[0]}/${tk.tokens[1]}`;
    if (tk.cost) meta += ` · $${tk.cost.toFixed(5)}`;
    const m = el("div", "meta latency", meta);
    m.dataset.latency = String(tk.lat);
    m.dataset.clock = String(tk.clock + tk.lat);
    box.appendChild(m);
    const ev = el("ul", "events");
    for (const [k, text] of tk.events) {
      const li = el("li");
      li.dataset.kind = k;
      li.appendChild(el("span", "k", k));
      li.appendChild(document.createTextNode(" " + S(text)));
      li.title = S(text);
      ev.appendChild(li);
    }
    box.appendChild(ev);
  }

  // ------------------------------------------------------------------ show
  function show(p) {
    pos = mode === "step" ? Math.min(Math.max(0, Math.round(p)), lastStep()) : Math.min(Math.max(0, p), lastTime());
    for (const P of panels) {
      const tr = P.tr;
      const { i, thinking } = locate(tr, pos);
      const v = tr.views[i];
      P.p.dataset.position = String(i);
      P.view.replaceChildren();
      P.view.className = "view kind-" + v.kind;
      const done = i >= tr.ticks.length;
      const tick = done ? null : tr.ticks[i];
      let scroll = null;
      if (VIEWS[v.kind]) VIEWS[v.kind](v, P.view, thinking ? null : tick, ui);
      else if (v.kind === "screenshot") scroll = drawScreenshot(tr, i, v, P.view);
      else scroll = drawTranscript(tr, i, v, P.view);
      if (scroll) scroll.scrollTop = scroll.scrollHeight;
      P.decision.replaceChildren();
      drawDecision(tr, i, thinking, P.decision, pos);
      const clock = done ? tr.end.clock : Math.min(pos, tr.end.clock);
      P.status.replaceChildren();
      P.status.appendChild(el("div", null, mode === "time" ? `clock ${fmtS(clock)}` : done ? "end" : `decision ${tick.t + 1}`));
      if (done) {
        const e = tr.end;
        P.status.appendChild(el("span", "banner " + e.outcome, e.verdict));
      }
    }
    if (mode === "step") {
      slider.max = String(lastStep());
      slider.value = String(pos);
      where.textContent = `position ${pos} of ${lastStep()}`;
    } else {
      slider.max = "1000";
      slider.value = String(lastTime() > 0 ? Math.round((1000 * pos) / lastTime()) : 0);
      where.textContent = `t = ${fmtS(pos)} of ${fmtS(lastTime())}`;
    }
    document.body.dataset.mode = mode;
    document.body.dataset.position = String(pos);
  }

  function stepBy(d) {
    if (mode === "step") return show(pos + d);
    // time mode: jump to the next / previous moment a decision starts in any panel
    const times = [0, ...trials.flatMap((t) => t.ticks.map((k) => k.clock)), ...trials.map((t) => t.end.clock)].sort((a, b) => a - b);
    const eps = 1e-12;
    const next = d > 0 ? times.find((x) => x > pos + eps) : [...times].reverse().find((x) => x < pos - eps);
    show(next == null ? (d > 0 ? lastTime() : 0) : next);
  }

  // ------------------------------------------------------------------ playing
  let raf = 0, lastNow = 0, acc = 0;
  function frame(now) {
    if (!playing) return;
    const dt = (now - lastNow) / 1000;
    lastNow = now;
    if (mode === "step") {
      acc += dt * speed.step;
      if (acc >= 1) { const k = Math.floor(acc); acc -= k; show(pos + k); }
      if (pos >= lastStep()) return stop();
    } else {
      show(pos + dt * speed.time);
      if (pos >= lastTime()) return stop();
    }
    raf = requestAnimationFrame(frame);
  }
  function play() {
    if (mode === "step" ? pos >= lastStep() : pos >= lastTime()) show(0);
    playing = true;
    playBtn.textContent = "pause";
    lastNow = performance.now();
    acc = 0;
    raf = requestAnimationFrame(frame);
  }
  function stop() {
    playing = false;
    playBtn.textContent = "play ▶";
    cancelAnimationFrame(raf);
  }

  function setMode(m) {
    if (m !== "time" && m !== "step") throw new Error("mode is time or step");
    stop();
    // keep the left panel's decision when switching
    const i = locate(trials[0], pos).i;
    mode = m;
    modeSel.value = m;
    showSpeed();
    if (m === "step") show(i);
    else show(i < trials[0].ticks.length ? trials[0].ticks[i].clock : trials[0].end.clock);
  }
  function showSpeed() {
    speedIn.value = String(+speed[mode].toPrecision(3));
    speedLabel.textContent = mode === "time" ? "× real time" : "decisions / s";
  }
  function setSpeed(x) {
    if (x > 0 && isFinite(x)) speed[mode] = x;
    showSpeed();
  }

  // The frames a GIF shows: [position, milliseconds] pairs, at most maxFrames, the last held holdMs. In time
  // mode no other frame is held longer than maxFrameMs: a long think is compressed (its frame shows its length).
  function schedule(maxFrames, holdMs, maxFrameMs) {
    maxFrames = Math.max(2, maxFrames | 0);
    holdMs = holdMs == null ? 2000 : holdMs;
    maxFrameMs = maxFrameMs == null ? 2000 : maxFrameMs;
    const out = [];
    if (mode === "step") {
      const L = lastStep();
      const stride = Math.max(1, Math.ceil((L + 1) / maxFrames));
      const ms = (1000 * stride) / speed.step;
      for (let p = 0; p < L; p += stride) out.push([p, ms]);
      out.push([L, holdMs]);
    } else {
      const T = lastTime();
      const wall = T / speed.time;
      const gap = Math.max(0.05, wall / (maxFrames - 1)) * speed.time; // in clock seconds
      const events = [...new Set([0, ...trials.flatMap((t) => t.ticks.flatMap((k) => [k.clock, k.clock + k.lat])), ...trials.map((t) => t.end.clock)])]
        .filter((x) => x >= 0 && x <= T).sort((a, b) => a - b);
      const kept = [0];
      for (const x of events) if (x - kept[kept.length - 1] >= gap) kept.push(x);
      if (kept[kept.length - 1] < T) {
        if (kept.length >= maxFrames) kept[kept.length - 1] = T; else kept.push(T);
      }
      for (let k = 0; k < kept.length; k++) {
        const ms = k + 1 < kept.length ? Math.min(maxFrameMs, (1000 * (kept[k + 1] - kept[k])) / speed.time) : holdMs;
        out.push([kept[k], ms]);
      }
    }
    return out;
  }

  document.addEventListener("keydown", (e) => {
    if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "SELECT")) return;
    if (e.key === " ") { e.preventDefault(); playing ? stop() : play(); }
    else if (e.key === "ArrowRight") { stop(); stepBy(1); }
    else if (e.key === "ArrowLeft") { stop(); stepBy(-1); }
  });

  window.replay = {
    show, setMode, setSpeed, schedule, play, stop,
    state: () => ({ mode, pos, speed: speed[mode], positions: panels.map((P) => locate(P.tr, pos)) }),
  };
  showSpeed();
  show(0);
})();
