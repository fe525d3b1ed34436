// The BabyAI replay view (s1gym/tasks/babyai/views.py rebuilds it from the texts): the map of the grid as the
// player has seen it, as an SVG — walls, doors with their state, keys, balls and boxes in their colours, the
// cells the agent stood on and the agent as a triangle pointing where it faces. Registered for the page's
// script (replay.js) as window.S1Views.babyai = function (view, box, tick, ui).
(function () {
  "use strict";
  const VIEWS = (window.S1Views = window.S1Views || {});
  const NS = "http://www.w3.org/2000/svg";
  const COLOURS = { red: "#e53935", green: "#43a047", blue: "#1e63d6", purple: "#7b3fc4", yellow: "#f4c20d", grey: "#7d7d7d" };
  const C = 26; // pixels per cell
  const ANGLE = { up: 0, right: 90, down: 180, left: 270 };

  function svgEl(tag, attrs, parent) {
    const e = document.createElementNS(NS, tag);
    for (const [k, val] of Object.entries(attrs)) e.setAttribute(k, String(val));
    if (parent) parent.appendChild(e);
    return e;
  }

  function drawBabyAI(v, box, tick, { el, S }) {
    const head = el("div", "bai-mission", v.mission);
    box.appendChild(head);
    if (v.parts) box.appendChild(el("div", "bai-parts", v.parts));
    const svg = svgEl("svg", { class: "bai-grid", width: v.width * C, height: v.height * C,
      viewBox: `0 0 ${v.width * C} ${v.height * C}`, role: "img", "aria-label": "the map as the agent has seen it" });
    const at = (x, y) => [(x - v.x0) * C, (y - v.y0) * C];
    for (const [x, y] of v.trail) { const [px, py] = at(x, y); svgEl("rect", { x: px, y: py, width: C, height: C, class: "bai-trail" }, svg); }
    for (const [x, y] of v.walls) { const [px, py] = at(x, y); svgEl("rect", { x: px, y: py, width: C, height: C, class: "bai-wall" }, svg); }
    for (const [x, y, type, colour, state] of v.objects) {
      const [px, py] = at(x, y);
      const fill = COLOURS[colour] || "#999";
      const g = svgEl("g", { class: `bai-obj bai-${type}`, "data-cell": `${x},${y}`, "data-state": state }, svg);
      svgEl("title", {}, g).textContent = `${state ? state + " " : ""}${colour} ${type}`;
      if (type === "door") {
        if (state === "open") svgEl("rect", { x: px + 1, y: py + 1, width: C - 2, height: C - 2, fill: "none", stroke: fill, "stroke-width": 3 }, g);
        else {
          svgEl("rect", { x: px + 1, y: py + 1, width: C - 2, height: C - 2, fill, stroke: "#222" }, g);
          if (state === "locked") svgEl("rect", { x: px + C / 2 - 2, y: py + C / 2 - 5, width: 4, height: 10, fill: "#222" }, g);
          else svgEl("circle", { cx: px + C - 6, cy: py + C / 2, r: 2, fill: "#222" }, g);
        }
      } else if (type === "ball") svgEl("circle", { cx: px + C / 2, cy: py + C / 2, r: C / 2 - 4, fill }, g);
      else if (type === "box") svgEl("rect", { x: px + 4, y: py + 4, width: C - 8, height: C - 8, fill: "none", stroke: fill, "stroke-width": 3 }, g);
      else { // key: a ring and a shaft
        svgEl("circle", { cx: px + 7, cy: py + C / 2, r: 4, fill: "none", stroke: fill, "stroke-width": 2.5 }, g);
        svgEl("rect", { x: px + 10, y: py + C / 2 - 1.5, width: 9, height: 3, fill }, g);
        svgEl("rect", { x: px + 15, y: py + C / 2, width: 2.5, height: 5, fill }, g);
      }
    }
    const [ax, ay, facing] = v.agent;
    const [px, py] = at(ax, ay);
    const agent = svgEl("polygon", { points: `${px + C / 2},${py + 3} ${px + C - 4},${py + C - 4} ${px + 4},${py + C - 4}`,
      class: "bai-agent", transform: `rotate(${ANGLE[facing] || 0} ${px + C / 2} ${py + C / 2})` }, svg);
    svgEl("title", {}, agent).textContent = `you, facing ${facing}` + (v.carrying ? `, carrying a ${v.carrying}` : "");
    const wrap = el("div", "bai-wrap");
    wrap.appendChild(svg);
    box.appendChild(wrap);
    box.appendChild(el("div", "bai-carry", v.carrying ? `carrying: ${v.carrying}` : "carrying nothing"));
    if (S(v.note)) box.appendChild(el("div", "note", S(v.note)));
  }

  VIEWS.babyai = drawBabyAI;
})();
