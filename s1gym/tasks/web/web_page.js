// What a person could do now on a MiniWoB page: one entry per move, in document order.
// Called by s1gym.tasks.web.env (WebEngine._read) as page.evaluate(SOURCE, {values}); tags each target
// element with data-s1-target="<index>" so the engine can act on it through a Playwright locator.
// Names follow the ARIA rules' common cases (aria-label, aria-labelledby, <label>, the text, title,
// placeholder, alt), with fallbacks a person would use for an unnamed control: the label text just
// before it, an icon's class name.
(args) => {
  const SKIP = new Set(["reward-display", "sync-task-cover", "click-canvas", "query"]);
  const norm = (s) => (s || "").replace(/\s+/g, " ").trim();
  const cut = (s, n) => (s.length > n ? s.slice(0, n - 3).trimEnd() + "..." : s);
  const TEXT_TYPES = new Set(["text", "password", "search", "email", "number", "tel", "url", "date", "time", ""]);
  const CLICK_ROLES = new Set(["button", "link", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "option",
    "checkbox", "radio", "switch", "treeitem"]);
  for (const el of document.querySelectorAll("[data-s1-target]")) el.removeAttribute("data-s1-target");

  // jQuery click handlers, bound directly or delegated to an ancestor with a selector.
  const jq = window.jQuery;
  const delegated = [];
  const direct = new Set();
  if (jq && jq._data) {
    for (const el of [document, ...document.querySelectorAll("*")]) {
      const events = jq._data(el, "events");
      if (!events) continue;
      // (a direct mousedown alone does not count: jQuery UI binds one to whole menus and dialogs
      // to keep focus or raise them, which a person does not "click")
      for (const type of ["click", "mousedown", "mouseup", "dblclick"]) {
        for (const h of events[type] || []) {
          if (h.selector) delegated.push([el, h.selector]);
          else if (type !== "mousedown") direct.add(el);
        }
      }
    }
  }
  const hasHandler = (el) => {
    if (direct.has(el) || typeof el.onclick === "function" || typeof el.onmousedown === "function") return true;
    for (const [root, selector] of delegated) {
      try {
        if (root !== el && root.contains(el) && el.matches(selector)) return true;
      } catch (e) { /* a selector jQuery accepts but the DOM does not */ }
    }
    return false;
  };

  const visible = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) return false;
    if (el.checkVisibility && !el.checkVisibility({ visibilityProperty: true, opacityProperty: true })) return false;
    return true;
  };
  // Not covered by something else (a modal overlay, an overlapping button): a point of the element that
  // hits it or its descendant, as an offset from its top-left corner (the engine clicks there); null when
  // no point does. The centre first, then a grid of points inside it.
  const reachable = (el) => {
    const r = el.getBoundingClientRect();
    const mine = (hit) => hit && (hit === el || el.contains(hit) || (el.labels && [...el.labels].some((l) => l.contains(hit))));
    const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
    if (cx < 0 || cy < 0 || cx >= window.innerWidth || cy >= window.innerHeight) return { x: r.width / 2, y: r.height / 2 };
    const centre = document.elementFromPoint(cx, cy);
    if (!centre || mine(centre) || centre.contains(el)) return { x: r.width / 2, y: r.height / 2 };
    for (const fy of [0.5, 0.25, 0.75, 0.1, 0.9]) {
      for (const fx of [0.5, 0.25, 0.75, 0.1, 0.9]) {
        const x = r.left + r.width * fx, y = r.top + r.height * fy;
        if (x < 0 || y < 0 || x >= window.innerWidth || y >= window.innerHeight) continue;
        if (mine(document.elementFromPoint(x, y))) return { x: r.width * fx, y: r.height * fy };
      }
    }
    return null;
  };
  const enabled = (el) => !el.disabled && el.getAttribute("aria-disabled") !== "true" && !el.closest("fieldset[disabled]");

  const precedingText = (el) => {
    // the visible text just before a control (an unassociated label), within its parent
    let node = el.previousSibling;
    while (node) {
      if (node.nodeType === Node.ELEMENT_NODE && node.matches("button, input, select, textarea, a, [role]")) return "";
      const t = norm(node.textContent);
      if (t) return t;
      node = node.previousSibling;
    }
    const parent = el.parentElement;
    if (parent && parent.id !== "area" && parent !== document.body && norm(parent.textContent) === "") return precedingText(parent);
    return "";
  };
  const iconName = (el) => {
    const cls = [...el.classList].find((c) => !/^(ui-|fa$|glyph|icon$|hover|active|clicked|selected)/.test(c));
    return norm((cls || el.id || "").replace(/[-_]+/g, " "));
  };
  // Accessible names and roles, the common cases of the ARIA rules computed in page JS (Chromium's own
  // el.computedName costs ~1 ms an element: too slow to call for every control at every step).
  const byIds = (ids) => norm(ids.split(/\s+/).map((id) => (document.getElementById(id) || {}).textContent || "").join(" "));
  const nameOf = (el) => {
    let name = norm(el.getAttribute("aria-label"));
    if (!name && el.getAttribute("aria-labelledby")) name = byIds(el.getAttribute("aria-labelledby"));
    if (!name && el.labels && el.labels.length) name = norm([...el.labels].map((l) => l.innerText).join(" "));
    const field = el.matches("input, textarea, select") || el.isContentEditable;
    if (!name && el.tagName === "INPUT" && ["button", "submit", "reset"].includes(el.type)) name = norm(el.value);
    if (!name && !field) name = norm(el.innerText);
    if (!name) name = norm(el.getAttribute("title") || el.getAttribute("placeholder") || el.getAttribute("alt"));
    if (!name && field) name = precedingText(el);
    if (!name && !field) name = iconName(el);
    return cut(name, 60);
  };
  const TAG_ROLES = { BUTTON: "button", SELECT: "list", TEXTAREA: "textbox", IMG: "image", LI: "item", TD: "cell",
    TH: "cell", OPTION: "option", SUMMARY: "button", LABEL: "label", H1: "heading", H2: "heading", H3: "heading",
    H4: "heading", H5: "heading", H6: "heading" };
  const INPUT_ROLES = { checkbox: "checkbox", radio: "radio", button: "button", submit: "button", reset: "button",
    image: "button", range: "slider" };
  const roleOf = (el) => {
    if (el.closest("[role=tab]")) return "tab";
    const explicit = (el.getAttribute("role") || "").split(/\s+/)[0];
    if (explicit && !["presentation", "none", "generic"].includes(explicit)) return explicit === "listitem" ? "item" : explicit;
    if (el.tagName === "A" && el.hasAttribute("href")) return "link";
    if (el.tagName === "INPUT") return INPUT_ROLES[(el.getAttribute("type") || "").toLowerCase()] || "textbox";
    return TAG_ROLES[el.tagName] || (norm(el.innerText) ? "" : "icon");
  };

  const moves = [];
  const seen = new Set();
  const add = (el, kind, verb, role, name, extra) => {
    const index = moves.length;
    if (!el.hasAttribute("data-s1-target")) el.setAttribute("data-s1-target", String(index));
    const label = !name ? role || "element" : role ? `${role} "${name}"` : `"${name}"`;
    moves.push({ kind, target: el.getAttribute("data-s1-target"), text: `${verb} ${label}`, el, ...extra });
  };

  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT, {
    acceptNode: (el) => (SKIP.has(el.id) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  const values = (args.values || []).filter((v) => norm(v) !== "");
  for (let el = walker.nextNode(); el; el = walker.nextNode()) {
    if (!visible(el) || !enabled(el)) continue;
    const tag = el.tagName;
    const type = (el.getAttribute("type") || "").toLowerCase();
    const textField = (tag === "INPUT" && TEXT_TYPES.has(type)) || tag === "TEXTAREA" || el.isContentEditable;
    if (textField && !el.closest("[contenteditable=true]:not(:scope)")) {
      const point = reachable(el);
      if (!point) continue;
      const name = nameOf(el);
      seen.add(el);
      add(el, "click", "click", "textbox", name, { point }); // focus it (opens a date picker, a suggestion list)
      if (el.readOnly) continue;
      for (const v of values) add(el, "type", "type", "textbox", name, { value: v, point, pre: `type "${v}" into ` });
      continue;
    }
    if (tag === "SELECT") {
      if (!reachable(el)) continue;
      const name = nameOf(el) || "list";
      for (const opt of el.options) {
        if (opt.disabled) continue;
        add(el, "select", "select", "", "", { value: opt.value, optionText: norm(opt.text), listName: name });
      }
      continue;
    }
    const role = roleOf(el);
    const cursor = window.getComputedStyle(el).cursor;
    const parentCursor = el.parentElement ? window.getComputedStyle(el.parentElement).cursor : "auto";
    const clickable =
      (tag === "BUTTON" || (tag === "A" && (el.hasAttribute("href") || hasHandler(el))) ||
        (tag === "INPUT" && ["checkbox", "radio", "button", "submit", "reset", "image"].includes(type)) ||
        CLICK_ROLES.has(role) || hasHandler(el) || (cursor === "pointer" && parentCursor !== "pointer"));
    if (!clickable) continue;
    // a clickable inside a clickable of the same text (a link in a date picker cell, a span in a button)
    // is the same move for a person: keep the outer one
    let outer = el.parentElement, same = false;
    while (outer && !same) {
      if (seen.has(outer)) same = norm(outer.innerText) === norm(el.innerText);
      outer = outer.parentElement;
    }
    if (same) continue;
    if (tag === "LABEL" && el.control && seen.has(el.control)) continue;
    const point = reachable(el);
    if (!point) continue;
    seen.add(el);
    add(el, "click", "click", roleOf(el), nameOf(el), { point });
  }
  // select moves read "select "<option>" in list "<name>""
  for (const m of moves) {
    if (m.kind === "select") m.text = `select "${cut(m.optionText, 60)}" in list "${m.listName}"`;
    if (m.kind === "type") m.text = m.pre + m.text.slice("type ".length);
  }
  // the same text twice: say where (the nearest ancestor's text that tells them apart), then number them
  const groups = new Map();
  for (const m of moves) groups.set(m.text, [...(groups.get(m.text) || []), m]);
  for (const [text, group] of groups) {
    if (group.length < 2) continue;
    const els = group.map((m) => m.el);
    for (const m of group) {
      // the largest ancestor that holds this member and no other
      let best = m.el;
      while (best.parentElement && best.parentElement !== document.body && !els.some((e) => e !== m.el && best.parentElement.contains(e))) best = best.parentElement;
      const context = best !== m.el ? cut(norm(best.innerText), 50) : "";
      if (context && context !== norm(m.el.innerText)) m.text = `${text} in "${context}"`;
    }
  }
  const counts = new Map();
  const total = new Map();
  for (const m of moves) total.set(m.text, (total.get(m.text) || 0) + 1);
  for (const m of moves) {
    if (total.get(m.text) < 2) continue;
    const k = (counts.get(m.text) || 0) + 1;
    counts.set(m.text, k);
    m.text = `${m.text} (${k})`;
  }
  const active = document.activeElement;
  const focusedField = active && active !== document.body &&
    ((active.tagName === "INPUT" && TEXT_TYPES.has((active.getAttribute("type") || "").toLowerCase())) || active.tagName === "TEXTAREA");
  if (focusedField && !active.readOnly) moves.push({ kind: "press", target: null, text: "press Enter", value: "Enter" });
  return {
    utterance: (() => { const u = core.getUtterance(); return typeof u === "string" ? u : u.utterance; })(),
    done: !!WOB_DONE_GLOBAL,
    reward: WOB_RAW_REWARD_GLOBAL,
    reason: WOB_REWARD_REASON === null || WOB_REWARD_REASON === undefined ? "" : String(WOB_REWARD_REASON),
    moves: moves.map((m) => ({ kind: m.kind, target: m.target, text: m.text, value: m.value === undefined ? null : String(m.value),
      point: m.point || null,
      inputType: m.el && m.el.tagName === "INPUT" ? (m.el.getAttribute("type") || "text").toLowerCase() : "" })),
  };
}
