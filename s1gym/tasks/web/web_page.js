// What a person could do now on a MiniWoB page, and what they see that the accessibility tree leaves out.
// Called by s1gym.tasks.web.engine (WebEngine._read) inside page.evaluate with
// {values, opts}: values are the texts the task types (from its instruction), opts the task's
// formulation (s1gym.tasks.web.catalogue: values read from the page, keys, drags, pointing, scrolls,
// highlights, waiting). Each move carries its element's path (web_runtime.js's __s1.pathOf), by which the engine
// acts on it now and when it replays the move on another page in the same state.
//
// Names follow the ARIA rules' common cases (aria-label, aria-labelledby, <label>, the text, title,
// placeholder, alt), with fallbacks a person would use for an unnamed control: the label text just
// before it, its colour, an icon's class name; shapes in a picture (SVG) are named by kind, text or
// colour and position.
(args) => {
  const opts = args.opts || {};
  const SKIP = new Set(["reward-display", "sync-task-cover", "click-canvas", "query"]);
  const norm = (s) => (s || "").replace(/\s+/g, " ").trim();
  const cut = (s, n) => (s.length > n ? s.slice(0, n - 3).trimEnd() + "..." : s);
  const TEXT_TYPES = new Set(["text", "password", "search", "email", "number", "tel", "url", "date", "time", "input", ""]);
  const CLICK_ROLES = new Set(["button", "link", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "option",
    "checkbox", "radio", "switch", "treeitem"]);
  const SHAPES = new Set(["circle", "ellipse", "rect", "polygon", "text", "path", "line", "image", "polyline"]);

  // Click handlers: jQuery's (bound directly or delegated to an ancestor with a selector), d3's
  // (node.__onclick), and the DOM's on* properties.
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
    if (Object.keys(el).some((k) => /^__on(click|mouseup|dblclick|mousedown$)/.test(k))) return true; // d3 v3 (not its drag)
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
    // (a transparent select over a styled arrow is still the control a person clicks)
    const opacity = el.tagName !== "SELECT";
    if (el.checkVisibility && !el.checkVisibility({ visibilityProperty: true, opacityProperty: opacity })) return false;
    return true;
  };
  // Not covered by something else (a modal overlay, an overlapping button): some point of it hits it.
  // An element outside the window, or scrolled out of its list, counts as reachable (the engine scrolls).
  const reachable = (el) => {
    const r = el.getBoundingClientRect();
    const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
    if (cx < 0 || cy < 0 || cx >= window.innerWidth || cy >= window.innerHeight) return true;
    const centre = document.elementFromPoint(cx, cy);
    if (!centre || centre === el || el.contains(centre) || centre.contains(el)) return true;
    if (el.labels && [...el.labels].some((l) => l.contains(centre))) return true;
    return !!__s1.pointOf(el);
  };
  const enabled = (el) => !el.disabled && !el.closest("[aria-disabled=true], fieldset[disabled], .ui-state-disabled");
  // a whole menu, list, tab strip or dialog is where its items are, not a thing a person clicks
  const CONTAINER_ROLES = new Set(["menu", "menubar", "listbox", "tablist", "dialog", "tree", "list", "grid", "radiogroup"]);

  // ---------------------------------------------------------------------------------- colours
  const NAMED = { "0,0,0": "black", "255,255,255": "white", "255,0,0": "red", "0,128,0": "green", "0,0,255": "blue",
    "255,255,0": "yellow", "128,128,128": "grey", "128,0,128": "purple", "255,165,0": "orange", "0,255,255": "cyan",
    "255,0,255": "magenta", "255,192,203": "pink", "128,128,0": "olive", "0,255,0": "lime", "128,0,0": "maroon",
    "0,0,128": "navy", "0,128,128": "teal", "192,192,192": "silver", "165,42,42": "brown", "211,211,211": "lightgrey",
    "169,169,169": "darkgrey" };
  const colourName = (css) => {
    const m = /rgba?\((\d+),\s*(\d+),\s*(\d+)(?:,\s*([\d.]+))?\)/.exec(css || "");
    if (!m || m[4] === "0") return "";
    const key = `${m[1]},${m[2]},${m[3]}`;
    return NAMED[key] || "#" + [m[1], m[2], m[3]].map((v) => Number(v).toString(16).padStart(2, "0")).join("");
  };

  // ------------------------------------------------------------------------------------ names
  const precedingText = (el) => {
    // the visible text just before a control (an unassociated label), within its parent
    let node = el.previousSibling;
    while (node) {
      if (node.nodeType === Node.ELEMENT_NODE && (node.matches("button, input, select, textarea, a, [role]") ||
        node.querySelector("button, input, select, textarea"))) return "";
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
    // jQuery UI's arrow buttons (a spinner's up and down) say their direction only in a class
    const dir = [...el.classList].map((c) => /^ui-[a-z]+-(up|down|prev|next|close)$/.exec(c)).find(Boolean);
    return norm((cls || (dir && dir[1]) || el.id || "").replace(/[-_]+/g, " "));
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
    if (!name && !field && el.querySelector(":scope > ul, :scope > ol")) {
      // a list item holding a nested list (a menu with its submenu, a folder): its own text
      name = norm([...el.childNodes].filter((c) => !(c.nodeType === 1 && /^(UL|OL)$/.test(c.tagName)))
        .map((c) => (c.nodeType === 1 ? c.innerText : c.textContent)).join(" "));
    }
    if (!name && !field) name = norm(el.innerText);
    if (!name) name = norm(el.getAttribute("title") || el.getAttribute("placeholder") || el.getAttribute("alt"));
    if (!name && field) name = precedingText(el);
    if (!name && !field && !el.children.length) name = colourName(getComputedStyle(el).backgroundColor);
    if (!name && !field) name = iconName(el);
    return cut(name, 60);
  };
  const TAG_ROLES = { BUTTON: "button", SELECT: "list", TEXTAREA: "textarea", IMG: "image", LI: "item", TD: "cell",
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
    return TAG_ROLES[el.tagName] || (norm(el.innerText) ? "" : colourName(getComputedStyle(el).backgroundColor) ? "box" : "icon");
  };

  // ---------------------------------------------------------------------------------- pictures
  // The shapes of the page's SVG pictures, as a person would describe them: kind, text or colour,
  // size and where (the centre, in pixels from the picture's top-left corner).
  const shapeKind = (el) => {
    const tag = el.tagName.toLowerCase();
    if (tag === "circle" || tag === "ellipse") return "circle";
    if (tag === "rect") return "rectangle";
    if (tag === "polygon") return (el.getAttribute("points") || "").trim().split(/[\s,]+/).length === 6 ? "triangle" : "polygon";
    return { text: "text", line: "line", path: "shape", image: "image", polyline: "line" }[tag] || tag;
  };
  const shapeLabel = (el) => {
    if (el.tagName.toLowerCase() === "text") return cut(norm(el.textContent), 30);
    const fill = el.getAttribute("fill");
    if (fill && fill !== "none" && /^[a-z]+$/i.test(fill)) return fill.toLowerCase();
    if (fill === "none" && el.getAttribute("stroke") && /^[a-z]+$/i.test(el.getAttribute("stroke"))) return el.getAttribute("stroke").toLowerCase();
    return colourName(getComputedStyle(el).fill) || colourName(getComputedStyle(el).stroke);
  };
  const shapeWhere = (el) => {
    const svg = el.ownerSVGElement || el;
    const o = svg.getBoundingClientRect(), r = el.getBoundingClientRect();
    return { x: Math.round(r.left + r.width / 2 - o.left), y: Math.round(r.top + r.height / 2 - o.top),
      size: Math.round(Math.max(r.width, r.height)) };
  };
  const picture = [];
  const svgShapes = [];
  const shapeText = new Map(); // element -> "<kind> "<label>" at (x,y)"
  for (const svg of document.querySelectorAll("svg")) {
    if (svg.closest("#reward-display, #query") || !visible(svg) || svg.ownerSVGElement) continue;
    const clickable = hasHandler(svg) || !!svg.closest("[onclick]");
    const frame = svg.getBoundingClientRect();
    const mine = [];
    for (const el of svg.querySelectorAll("*")) {
      if (!SHAPES.has(el.tagName.toLowerCase()) || !visible(el)) continue;
      const box = el.getBoundingClientRect();
      if (Math.max(box.width, box.height) < 4) continue; // a speck (a pie menu folded into its centre)
      const cx = box.left + box.width / 2, cy = box.top + box.height / 2;
      if (cx < frame.left || cy < frame.top || cx > frame.right || cy > frame.bottom) continue; // outside the picture
      if (el.tagName.toLowerCase() !== "text" && (getComputedStyle(el).fill === "none" && !el.getAttribute("stroke"))) continue;
      const w = shapeWhere(el);
      const label = el.tagName.toLowerCase() === "text" && el.getAttribute("fill") && el.getAttribute("fill") !== "black"
        ? ` fill ${el.getAttribute("fill")}` : "";
      picture.push(`${shapeKind(el)} "${shapeLabel(el)}" ${w.size}px at (${w.x},${w.y})${label}`);
      const text = `${shapeKind(el)} "${shapeLabel(el)}" at (${w.x},${w.y})`;
      shapeText.set(el, text);
      let handled = clickable;
      for (let a = el; a && a !== svg && !handled; a = a.parentElement) handled = hasHandler(a) || getComputedStyle(a).cursor === "pointer";
      if (__s1.pointOf(el)) mine.push([el, text, handled]);
    }
    // a picture with one clickable shape is a clickable picture: all its shapes are moves (handlers
    // added with addEventListener cannot be seen, and a selected item may lose its pointer cursor)
    if (mine.some(([, , handled]) => handled)) for (const [el, text] of mine) svgShapes.push([el, text]);
  }

  // ------------------------------------------------------------------------------------ moves
  const moves = [];
  const seen = new Set();
  const add = (el, kind, verb, role, name, extra) => {
    const label = !name ? role || "element" : role ? `${role} "${name}"` : `"${name}"`;
    moves.push({ kind, text: `${verb} ${label}`, el, ...extra });
  };

  // values to type: the instruction's, and those the task reads off the page
  const typed = [];
  for (const v of args.values || []) if (norm(v) !== "" && !typed.includes(v)) typed.push(v);
  for (const src of opts.pageValues || []) {
    for (const el of document.querySelectorAll(src.selector)) {
      if (!visible(el) && !src.hidden) continue;
      const text = norm(el.value !== undefined && el.tagName !== "LI" ? el.value || el.textContent : el.textContent);
      const parts = src.words ? text.split(" ").map((w) => (src.strip === false ? w : w.replace(/^[^\w@$-]+|[^\w]+$/g, ""))) : [text];
      for (const p of parts) if (p && !typed.includes((src.prefix || "") + p)) typed.push((src.prefix || "") + p);
    }
  }
  for (const v of opts.numbers ? Array.from({ length: opts.numbers[1] - opts.numbers[0] + 1 }, (_, i) => String(opts.numbers[0] + i)) : []) {
    if (!typed.includes(v)) typed.push(v);
  }

  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT, {
    acceptNode: (el) => (SKIP.has(el.id) || el.tagName.toLowerCase() === "svg" ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  const svgByFirst = new Map();
  for (const [el, text] of svgShapes) {
    const svg = el.ownerSVGElement;
    if (!svgByFirst.has(svg)) svgByFirst.set(svg, []);
    svgByFirst.get(svg).push([el, text]);
  }
  const addShapes = (svg) => {
    for (const [el, text] of svgByFirst.get(svg) || []) moves.push({ kind: "click", text: `click ${text}`, el });
    svgByFirst.delete(svg);
  };
  for (let el = walker.nextNode(); el; el = walker.nextNode()) {
    // the pictures' shapes come where their picture is in the document
    for (const svg of [...svgByFirst.keys()]) if (svg.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_PRECEDING) addShapes(svg);
    if (!visible(el) || !enabled(el)) continue;
    const tag = el.tagName;
    const type = (el.getAttribute("type") || "").toLowerCase();
    const textField = (tag === "INPUT" && TEXT_TYPES.has(type)) || tag === "TEXTAREA" || el.isContentEditable;
    if (textField && !el.closest("[contenteditable=true]:not(:scope)")) {
      if (!reachable(el)) continue;
      const name = nameOf(el);
      const role = tag === "TEXTAREA" ? "textarea" : "textbox";
      seen.add(el);
      add(el, "click", "click", role, name, {}); // focus it (opens a date picker, a suggestion list)
      if (el.classList.contains("hasDatepicker")) {
        for (const d of opts.dates || []) add(el, "pickdate", "pick date", role, name, { value: d, pre: `pick date "${d}" in ` });
      }
      if (el.readOnly || el.isContentEditable || (opts.typeInto && !el.matches(opts.typeInto))) continue;
      for (const v of typed) add(el, "type", "type", role, name, { value: v, pre: `type "${v}" into ` });
      continue;
    }
    // a select list's options are its "select" moves (below), as Playwright's and BrowserGym's select_option,
    // not clicks too: Chromium scrolls a list box to reveal a clicked option on its own schedule, so after
    // such a click the options a point hits, and the next click's option, differed between a page that
    // played the moves and one that replayed them (bench/web.py --forks, click-scroll-list)
    if (tag === "OPTION" && el.closest("select")) continue;
    if (tag === "SELECT") {  // (a styled select may sit under its own label: its options are still the choice)
      const name = nameOf(el) || "list";
      for (const opt of el.options) {
        if (opt.disabled) continue;
        add(el, el.multiple ? "toggle" : "select", "select", "", "", { value: opt.value, optionText: norm(opt.text), listName: name });
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
    if (!clickable || CONTAINER_ROLES.has(role)) continue;
    // a clickable inside a clickable of the same text (a link in a date picker cell, a span in a button)
    // is the same move for a person: keep the outer one
    let outer = el.parentElement, same = false;
    while (outer && !same) {
      if (seen.has(outer)) same = norm(outer.innerText) === norm(el.innerText);
      if (!same) outer = outer.parentElement;
    }
    if (same) {
      // (a wrapper with no role of its own takes the inner element's: a button in a clickable box)
      const m = moves.find((x) => x.el === outer && x.kind === "click");
      const inner = roleOf(el);
      if (m && m.text.startsWith('click "') && inner && inner !== "icon") m.text = `click ${inner} ${m.text.slice("click ".length)}`;
      continue;
    }
    if (tag === "LABEL" && el.control && seen.has(el.control)) continue;
    if (!reachable(el)) continue;
    seen.add(el);
    add(el, "click", "click", role, nameOf(el), {});
  }
  for (const svg of [...svgByFirst.keys()]) addShapes(svg);

  // moves a task's formulation adds: drag one element onto another or by a step in a direction,
  // scroll, highlight text, press a key, let time pass
  const named = (el, label) => {
    if (label) return label;
    if (shapeText.has(el)) return shapeText.get(el);
    const m = moves.find((x) => x.el === el && x.kind === "click");
    if (m) return m.text.replace(/^click /, "");
    const r = roleOf(el), n = nameOf(el);
    return !n ? r || "element" : r ? `${r} "${n}"` : `"${n}"`;
  };
  const dragMoves = [];
  for (const d of opts.drags || []) {
    const sources = [...document.querySelectorAll(d.from)].filter(visible);
    const targets = d.to ? [...document.querySelectorAll(d.to)].filter(visible) : [];
    for (const s of sources) {
      for (const t of targets) if (t !== s && !s.contains(t)) dragMoves.push({ kind: "drag", text: `drag ${named(s, d.label)} onto ${named(t)}`, el: s, to: t });
      for (const dir of d.directions || []) {
        const step = d.by || 30;
        const [dx, dy] = { up: [0, -step], down: [0, step], left: [-step, 0], right: [step, 0] }[dir];
        dragMoves.push({ kind: "drag", text: `drag ${named(s, d.label)} ${dir}`, el: s, dx, dy });
      }
    }
  }
  moves.push(...dragMoves);
  for (const sel of opts.hover ? [opts.hover] : []) {
    for (const el of document.querySelectorAll(sel)) if (visible(el) && reachable(el)) moves.push({ kind: "hover", text: `point at ${named(el)}`, el });
  }
  for (const sel of opts.scroll ? [opts.scroll] : []) {
    for (const el of document.querySelectorAll(sel)) {
      if (!visible(el) || el.scrollHeight <= el.clientHeight) continue;
      const who = named(el);
      if (el.scrollTop > 0) {
        moves.push({ kind: "scroll", text: `scroll ${who} up`, el, value: "up" });
        moves.push({ kind: "scroll", text: `scroll ${who} to the top`, el, value: "top" });
      }
      if (el.scrollTop + el.clientHeight < el.scrollHeight - 1) {
        moves.push({ kind: "scroll", text: `scroll ${who} down`, el, value: "down" });
        moves.push({ kind: "scroll", text: `scroll ${who} to the bottom`, el, value: "bottom" });
      }
    }
  }
  if (opts.highlight) {
    for (const el of document.querySelectorAll(opts.highlight.selector)) {
      if (!visible(el)) continue;
      if (opts.highlight.whole) moves.push({ kind: "highlight", text: `highlight ${cut(norm(el.innerText), 50) ? `"${cut(norm(el.innerText), 50)}"` : "text"}`, el, value: "" });
      if (opts.highlight.words) {
        const words = norm(el.innerText).split(" ").filter(Boolean); // as written ("integer." with its stop)
        for (const w of [...new Set(words)]) moves.push({ kind: "highlight", text: `highlight "${w}"`, el, value: w });
      }
    }
  }

  // select moves read "select "<option>" in list "<name>""
  for (const m of moves) {
    if (m.kind === "select" || m.kind === "toggle") m.text = `select "${cut(m.optionText, 60)}" in list "${m.listName}"`;
    if (m.kind === "type") m.text = m.pre + m.text.slice("type ".length);
    if (m.kind === "pickdate") m.text = m.pre + m.text.slice("pick date ".length);
  }
  // the same text twice: say where (the nearest ancestor's text that tells them apart), then number them
  const groups = new Map();
  for (const m of moves) groups.set(m.text, [...(groups.get(m.text) || []), m]);
  for (const [text, group] of groups) {
    if (group.length < 2) continue;
    const els = group.map((m) => m.el);
    if (new Set(els).size < els.length) continue; // one element, several moves (drags of one item): numbered below
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
    ((active.tagName === "INPUT" && TEXT_TYPES.has((active.getAttribute("type") || "").toLowerCase())) || active.tagName === "TEXTAREA" || active.isContentEditable);
  if (focusedField && !active.readOnly) {
    if (!visible(active)) {  // the keys go to a field nobody sees (a terminal's hidden input): type there
      for (const v of typed) moves.push({ kind: "type", text: `type "${v}"`, el: active, value: v, focused: true });
    }
    for (const key of ["Enter", ...(opts.keys || [])]) moves.push({ kind: "press", text: `press ${key}`, value: key });
  }
  for (const key of opts.anyKeys || []) moves.push({ kind: "press", text: `press ${key}`, value: key });
  if (opts.wait) moves.push({ kind: "wait", text: "wait", value: String(opts.wait) });

  // the values of the form fields, shown or not (a task's progress reads them)
  const form = [];
  for (const el of document.querySelectorAll("input, textarea, select")) {
    if (el.closest("#reward-display")) continue;
    const key = el.id || el.name || nameOf(el) || el.tagName.toLowerCase();
    if (el.type === "checkbox" || el.type === "radio") form.push([key, el.checked ? "checked" : ""]);
    else form.push([key, String(el.value)]);
  }
  // What a person sees or knows that the accessibility tree leaves out, for the state key (never shown as
  // text): the text selection (in the focused field, or on the page), the page's clipboard, and each element of
  // the task's area by its classes, inline style and scroll (a clicked box's "selected" border, a dragged box's
  // place).
  // Left out: hover and focus classes (Chromium sends the pointer's mouseover after a layout change on a timer
  // of its own, not the page's frozen clock, so ui-state-hover came and went between runs of the same moves),
  // the focused element itself (a click focuses what it clicks, so every checkbox ticked in another order
  // was a new state and Search(Uniform) on click-checkboxes ran for minutes; the moves show that a field has
  // the focus, not which: two states that differ only in which field has it share a key) and jQuery UI's own
  // ui-* classes (it adds them as it
  // sets widgets up and refreshes them, in an order and at times that differ between a fresh and a restarted
  // document, and says what they mean in the aria-* attributes the text already shows); sorted, as a widget
  // set up again adds its classes in another order.
  const steady = (el) => (el.getAttribute("class") || "").split(/\s+/)
    .filter((c) => c && !/hover|focus/i.test(c) && !c.startsWith("ui-")).sort().join(" ");
  const fieldSelection = focusedField && typeof active.selectionStart === "number" ? `${active.selectionStart}-${active.selectionEnd}` : "";
  const hidden = [fieldSelection, String(window.getSelection()), __s1.clipboard || ""];
  const areaRoot = document.getElementById("area");
  if (areaRoot) {
    for (const el of [areaRoot, ...areaRoot.querySelectorAll("*")]) {
      const scroll = el.scrollTop || el.scrollLeft ? ` ${el.scrollTop},${el.scrollLeft}` : "";
      hidden.push(`${steady(el)}|${el.getAttribute("style") || ""}|${el.getAttribute("transform") || ""}${scroll}`);
    }
  }
  // A memoryless page (opts.memo; s1gym.tasks.web.catalogue) is remembered by its state: the digest of its
  // document (every element of the body but MiniWoB's own display, attributes, text, form values, scroll), the
  // focus, the selection and the page's clipboard, under which each move's answer is remembered; a move that
  // types into a field is remembered under the digest with that field's value and selection left out (the
  // move clears the field first, so what it held does not change the answer).
  let memo = null;
  if (opts.memo) {
    const state = (masked) => {
      const out = [];
      const walk = (el) => {
        if (SKIP.has(el.id)) return;
        const attrs = [...el.attributes].map((a) => `${a.name}=${a.value}`).sort().join("\u0001");
        const own = el === masked ? "\u0002" : "value" in el && el.tagName !== "BUTTON" && el.tagName !== "LI"
          ? `${el.value}|${el.checked}|${el.selectedIndex}|${el.indeterminate}` : "";
        const scrolled = el === masked ? "" : el.scrollTop || el.scrollLeft ? `${el.scrollTop},${el.scrollLeft}` : "";
        out.push(`<${el.tagName} ${attrs}|${own}|${scrolled}`);
        for (const child of el.childNodes) {
          if (child.nodeType === Node.ELEMENT_NODE) walk(child);
          else if (child.nodeType === Node.TEXT_NODE) out.push(child.data);
        }
        out.push(">");
      };
      walk(document.body);
      const sel = active === masked ? "\u0002" : `${fieldSelection}|${window.getSelection()}`;
      out.push(sel, __s1.clipboard || "", active ? String(__s1.pathOf(active)) : "",
        `${window.scrollX},${window.scrollY}`);
      return __s1.digest(out.join("\u0000"));
    };
    const whole = state(null);
    const byField = new Map();
    memo = moves.map((m) => {
      if (m.kind !== "type" || m.focused) return whole;
      if (!byField.has(m.el)) byField.set(m.el, state(m.el));
      return byField.get(m.el);
    });
  }
  return {
    hidden: hidden.join("\n"),
    memo,
    utterance: __s1.utterance(),
    done: !!WOB_DONE_GLOBAL,
    reward: WOB_RAW_REWARD_GLOBAL,
    reason: WOB_REWARD_REASON === null || WOB_REWARD_REASON === undefined ? "" : String(WOB_REWARD_REASON),
    moves: moves.map((m) => ({ kind: m.kind, text: m.text, value: m.value === undefined ? null : String(m.value),
      path: m.el ? __s1.pathOf(m.el) : null, to: m.to ? __s1.pathOf(m.to) : null, dx: m.dx || 0, dy: m.dy || 0,
      focused: !!m.focused,
      inputType: m.el && m.el.tagName === "INPUT" ? (m.el.getAttribute("type") || "text").toLowerCase() : "" })),
    form,
    picture,
  };
}
