// The page side of s1gym's web engine, installed in every MiniWoB document before its own scripts run
// (Playwright's context.add_init_script). It makes a page a deterministic function of (task, seed, moves):
//
// - Math.random is a seeded generator from the first line of the page's own code on (MiniWoB seeds it
//   again with Math.seedrandom(seed) when an episode starts), so nothing random happens at load either;
// - the clock is frozen: Date, performance.now, setTimeout/setInterval, requestAnimationFrame and
//   requestIdleCallback run on a fake clock that moves only when the engine calls __s1.clock.runFor(ms)
//   (timers fire in time order, ties in creation order). __s1.start() clears every timer and sets the
//   clock back to the episode's start, so a page that played earlier episodes holds nothing of them
//   that runs on time;
// - CSS animations and transitions are off (they run on the compositor's real clock);
// - __s1.start(seed) starts an episode, __s1.prepare / __s1.hovered / __s1.press carry out a move's
//   page-side parts (find the element by its path, scroll it into view, find a point of it no other
//   element covers, wait until the pointer's hover styles have settled), so that a click lands on the
//   element the move names, every time.
(() => {
  if (window.__s1) return;
  const NativeDate = Date;
  const native = {
    setTimeout: window.setTimeout.bind(window),
    clearTimeout: window.clearTimeout.bind(window),
  };

  // ------------------------------------------------------------- Math.random until the episode seeds it
  let state = 0x2545f491;
  Math.random = function () {
    // mulberry32
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  // ------------------------------------------------------------------------------ the fake clock
  const clock = { now: Date.UTC(2017, 5, 1, 12), origin: Date.UTC(2017, 5, 1, 12), timers: new Map(), next: 1 };
  const FRAME_MS = 16;
  const LIMIT = 200000; // timer callbacks in one runFor: more is a page that never settles
  const schedule = (fn, delay, args, every, kind) => {
    const id = clock.next++;
    const wait = Math.max(0, Number(delay) || 0);
    clock.timers.set(id, { id, at: clock.now + (every ? Math.max(1, wait) : wait), fn, args, every: every ? Math.max(1, wait) : 0, kind });
    return id;
  };
  const cancel = (id) => { clock.timers.delete(Number(id)); };
  window.setTimeout = (fn, delay, ...args) => schedule(fn, delay, args, false, "timeout");
  window.setInterval = (fn, delay, ...args) => schedule(fn, delay, args, true, "interval");
  window.clearTimeout = cancel;
  window.clearInterval = cancel;
  window.requestAnimationFrame = (fn) => schedule(fn, FRAME_MS, null, false, "frame");
  window.cancelAnimationFrame = cancel;
  window.requestIdleCallback = (fn) => schedule(fn, 1, null, false, "idle");
  window.cancelIdleCallback = cancel;
  const perfNow = () => clock.now - clock.origin;
  try { Object.defineProperty(performance, "now", { value: perfNow, configurable: true }); } catch (e) { /* keep the native one */ }
  function FakeDate(...args) {
    if (!new.target) return new NativeDate(clock.now).toString();
    return args.length ? new NativeDate(...args) : new NativeDate(clock.now);
  }
  FakeDate.prototype = NativeDate.prototype;
  FakeDate.now = () => clock.now;
  FakeDate.parse = NativeDate.parse;
  FakeDate.UTC = NativeDate.UTC;
  window.Date = FakeDate;

  const fire = (t) => {
    try {
      if (t.kind === "frame") t.fn(perfNow());
      else if (t.kind === "idle") t.fn({ didTimeout: false, timeRemaining: () => 50 });
      else if (typeof t.fn === "function") t.fn(...(t.args || []));
      else (0, eval)(String(t.fn));
    } catch (e) {
      console.error(e); // as a browser reports an error thrown in a timer, and goes on
    }
  };
  clock.runFor = (ms) => {
    const end = clock.now + Math.max(0, ms);
    for (let n = 0; ; n++) {
      if (n > LIMIT) throw new Error(`the page ran more than ${LIMIT} timer callbacks in ${ms} ms of page time`);
      let best = null;
      for (const t of clock.timers.values()) {
        if (t.at <= end && (best === null || t.at < best.at || (t.at === best.at && t.id < best.id))) best = t;
      }
      if (best === null) break;
      clock.now = Math.max(clock.now, best.at);
      if (best.every) best.at += best.every;
      else clock.timers.delete(best.id);
      fire(best);
    }
    clock.now = end;
    return clock.timers.size;
  };
  clock.reset = (epochMs) => {
    clock.timers.clear();
    clock.now = epochMs;
    clock.origin = epochMs;
  };

  // ---------------------------------------------------------------- no animations on the real clock
  const STYLE = "*, *::before, *::after { transition: none !important; animation: none !important; caret-color: transparent !important; scroll-behavior: auto !important; }";
  const addStyle = () => {
    const style = document.createElement("style");
    style.id = "s1gym-no-animations";
    style.textContent = STYLE;
    (document.head || document.documentElement).appendChild(style);
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", addStyle, { once: true });
  else addStyle();

  // ----------------------------------------------------------------------------- elements by path
  // An element's path: its index among its parent's element children, from <html> down. The page is a
  // function of (task, seed, moves), so the path read at a state finds the same element when the state
  // is reached again.
  const pathOf = (el) => {
    const path = [];
    while (el && el !== document.documentElement) {
      const parent = el.parentElement;
      if (!parent) return null;
      path.push(Array.prototype.indexOf.call(parent.children, el));
      el = parent;
    }
    return path.reverse();
  };
  const locate = (path) => {
    let el = document.documentElement;
    for (const i of path || []) {
      el = el && el.children[i];
      if (!el) return null;
    }
    return el;
  };

  // A point of the element that hits it (or its descendant, or its label): centre first, then a grid,
  // as viewport coordinates; null when every point is covered, clipped or outside the viewport.
  const hits = (el, hit) => !!hit && (hit === el || el.contains(hit) || (el.labels && [...el.labels].some((l) => l.contains(hit))));
  const pointOf = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) return null;
    for (const fy of [0.5, 0.25, 0.75, 0.1, 0.9]) {
      for (const fx of [0.5, 0.25, 0.75, 0.1, 0.9]) {
        const x = r.left + r.width * fx, y = r.top + r.height * fy;
        if (x < 0 || y < 0 || x >= window.innerWidth || y >= window.innerHeight) continue;
        if (hits(el, document.elementFromPoint(x, y))) return { x: Math.round(x * 100) / 100, y: Math.round(y * 100) / 100 };
      }
    }
    return null;
  };

  const start = (seed, maxTime, epochMs) => {
    clock.reset(epochMs);
    if (document.activeElement && document.activeElement !== document.body && document.activeElement.blur) document.activeElement.blur();
    window.getSelection && window.getSelection().removeAllRanges();
    // the page's clipboard (below) is the episode's: what an earlier episode of this document copied is
    // not there on a fresh load, so a paste before any copy pastes nothing on every page
    api.clipboard = "";
    // jQuery UI's screen-reader announcements ("1 result is available...") outlive the widgets that
    // made them: a fresh page has them empty when its first episode starts
    for (const live of document.querySelectorAll(".ui-helper-hidden-accessible[role=status]")) live.textContent = "";
    // form fields back to their defaults by the HTML reset algorithm, as on a fresh load: a value a
    // person edited stays "dirty", and a page that then rewrites the field's default (a textarea's text)
    // would not show it (assigning .value marks it dirty too). A field outside a form is reset inside a
    // form made for the moment, then put back where it was.
    for (const form of document.forms) form.reset();
    for (const el of document.querySelectorAll("input, textarea, select")) {
      if (el.form || el.closest("#reward-display")) continue;
      const form = document.createElement("form");
      el.replaceWith(form);
      form.appendChild(el);
      form.reset();
      form.replaceWith(el);
    }
    // what MiniWoB's core and jQuery UI keep in a document between episodes, back to a fresh page's:
    // the marks core puts on clicked elements, the shared date picker and suggestion menus
    for (const el of document.querySelectorAll("[data-tampered], [data-wob_ref], [data-wob_eps]")) {
      for (const key of ["tampered", "wob_ref", "wob_eps"]) delete el.dataset[key];
    }
    const jq = window.jQuery;
    if (jq && jq.datepicker && jq.datepicker.dpDiv) {
      Object.assign(jq.datepicker, { _curInst: null, _keyEvent: false, _disabledInputs: [], _datepickerShowing: false,
        _inDialog: false, _lastInput: null });
      jq.datepicker.dpDiv.empty().removeAttr("style");
    }
    for (const menu of document.querySelectorAll("ul.ui-autocomplete")) { menu.innerHTML = ""; menu.style.display = "none"; }
    // MiniWoB's own reward display counts the document's episodes: back to a fresh page's
    WOB_EPISODE_ID = 0;
    core.wob_latest = "-";
    core.wob_scores = [];
    for (const [id, text] of [["reward-last", "-"], ["reward-avg", "-"], ["episode-id", "0"]]) {
      const el = document.getElementById(id);
      if (el) { el.textContent = text; el.removeAttribute("style"); }
    }
    core.EPISODE_MAX_TIME = maxTime;
    if (core.setDataMode) core.setDataMode("train");
    Math.seedrandom(seed);
    core.startEpisodeReal();
    window.scrollTo(0, 0);
    for (const id of ["reward-display", "click-canvas", "query", "sync-task-cover"]) {
      const el = document.getElementById(id);
      if (el) el.setAttribute("aria-hidden", "true");
    }
    return utterance();
  };

  // The instruction, and its fields when the page gives them (MiniWoB's natural-language tasks return
  // {utterance, fields} in train mode; the miniwob package reads the fields from there too).
  const utterance = () => {
    const u = core.getUtterance();
    return typeof u === "string" ? { text: u, fields: null } : { text: u.utterance, fields: Object.entries(u.fields || {}) };
  };

  // Where to press for a move's element: scrolled into view first when no point of it can be hit
  // (a suggestion below the fold of its list, a post further down the feed), as a person scrolls.
  const boxOf = (el) => { const r = el.getBoundingClientRect(); return `${r.left},${r.top},${r.width},${r.height}`; };
  // Where to press on the element at ``path``: a point no other element covers, scrolled into view
  // first when no point of it can be hit (a suggestion below the fold of its list, a post further down
  // the feed), as a person scrolls.
  const prepare = (path) => {
    const el = locate(path);
    if (!el) return { error: "the element is gone from the page" };
    const find = () => pointOf(el);
    let point = find();
    const scrolled = !point;
    if (scrolled) {
      el.scrollIntoView({ block: "center", inline: "center" });
      point = find();
    }
    if (!point) return { error: "no point of the element can be clicked (it is covered or outside the window)" };
    api.pointer = point;
    return { ...point, box: boxOf(el), scrolled };
  };

  // Where an element is (the end of a drag: a box drawn only as an outline is hit nowhere inside).
  const rectOf = (path) => {
    const el = locate(path);
    if (!el) return { error: "the element is gone from the page" };
    const r = el.getBoundingClientRect();
    return { box: `${r.left},${r.top},${r.width},${r.height}` };
  };

  // Select the element's text (a person drags over it), or the first whole word ``word`` in it.
  const highlight = (path, word) => {
    const el = locate(path);
    if (!el) return "the element is gone from the page";
    const sel = window.getSelection();
    const range = document.createRange();
    if (!word) {
      range.selectNodeContents(el);
    } else {
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      const re = new RegExp(`(^|[^\\w'-])(${word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")})(?![\\w'-])`);
      let found = false;
      for (let node = walker.nextNode(); node && !found; node = walker.nextNode()) {
        const m = re.exec(node.data);
        if (m) {
          range.setStart(node, m.index + m[1].length);
          range.setEnd(node, m.index + m[1].length + word.length);
          found = true;
        }
      }
      if (!found) return `no word "${word}" in the element`;
    }
    sel.removeAllRanges();
    sel.addRange(range);
    document.dispatchEvent(new Event("selectionchange"));
    el.dispatchEvent(new MouseEvent("mouseup", { bubbles: true }));
    return "";
  };

  // Copy and paste stay in the page (the browser's clipboard is shared by every page of the browser,
  // so a fork's paste would depend on what another page copied last).
  document.addEventListener("keydown", (ev) => {
    if (!(ev.ctrlKey || ev.metaKey) || !["c", "v", "x"].includes(ev.key.toLowerCase())) return;
    const field = document.activeElement;
    const isField = field && (field.tagName === "INPUT" || field.tagName === "TEXTAREA");
    if (ev.key.toLowerCase() !== "v") {
      api.clipboard = isField ? field.value.slice(field.selectionStart, field.selectionEnd) : String(window.getSelection());
      if (ev.key.toLowerCase() === "x" && isField) document.execCommand("delete");
    } else if (api.clipboard) {
      document.execCommand("insertText", false, api.clipboard);
    }
    ev.preventDefault();
  }, true);

  // After the pointer moved onto (x, y): resolve once the element under it is the move's element and
  // its box is the one it had before the pointer came (or, when hover styles change it, once it stopped
  // changing): an icon swapped on :hover for an image still loading shrinks to nothing for a moment,
  // and a press then lands on its container. Polled in real time (page time stands still).
  const hovered = (path, x, y, box, timeoutMs) => new Promise((resolve) => {
    const el = locate(path);
    if (!el) { resolve("the element is gone from the page"); return; }
    const deadline = NativeDate.now() + timeoutMs;
    let last = box, stable = 1;
    const poll = () => {
      const now = boxOf(el);
      const r = el.getBoundingClientRect();
      const ok = r.width > 0 && r.height > 0 && hits(el, document.elementFromPoint(x, y)) &&
        [...el.querySelectorAll("img")].every((i) => i.complete);
      stable = ok && now === last ? stable + 1 : 0;
      last = now;
      if (stable >= 2) { resolve(""); return; }
      if (NativeDate.now() > deadline) { resolve("the element did not stay under the pointer"); return; }
      native.setTimeout(poll, 5);
    };
    poll();
  });

  // ------------------------------------------------------------------ moves done in the page
  const dispatch = (el, ...types) => { for (const t of types) el.dispatchEvent(new Event(t, { bubbles: true })); };
  const gone = (what) => `the ${what} is gone from the page`;
  // A move on the element at a path: "" once done, else why not (the element, a `what`, is gone).
  const onElement = (what, act) => (path, value) => {
    const el = locate(path);
    if (!el) return gone(what);
    act(el, value);
    return "";
  };
  // A value given as a whole, focused and announced (value, input, change: Playwright's select_option and fill).
  const setValue = (el, value) => {
    el.focus();
    el.value = value;
    dispatch(el, "input", "change");
  };
  // A select list's option, chosen.
  const select = onElement("list", setValue);
  // An option of a multiple-choice list, toggled (a person's ctrl-click).
  const toggle = onElement("list", (el, value) => {
    const option = [...el.options].find((o) => o.value === value);
    el.focus();
    option.selected = !option.selected;
    dispatch(el, "input", "change");
  });
  // An element scrolled by its height (up, down) or to an end (top, bottom).
  const scroll = onElement("element", (el, value) => {
    const max = el.scrollHeight - el.clientHeight;
    el.scrollTop = { up: el.scrollTop - el.clientHeight, down: el.scrollTop + el.clientHeight, top: 0, bottom: max }[value];
    el.dispatchEvent(new Event("scroll"));
  });
  // A field given a value as a whole (a date, time or number input: what Playwright's fill does).
  const fill = onElement("field", setValue);
  // A field emptied before typing into it.
  const clear = (path) => {
    const el = locate(path);
    if (el && el.value !== "") { el.value = ""; dispatch(el, "input"); }
    return "";
  };
  // The next click of a date pick (value mm/dd/yyyy): the day when the open jQuery UI date picker
  // shows the date's month, else its previous/next month button.
  const pickerStep = (value) => {
    const [m, d, y] = value.split("/").map(Number);
    const picker = [...document.querySelectorAll(".ui-datepicker")].find((p) => p.offsetParent !== null);
    if (!picker) return { error: "no date picker is open" };
    const shown = picker.querySelector("td[data-month]");
    const month = shown ? Number(shown.dataset.month) + 1 : 0, year = shown ? Number(shown.dataset.year) : 0;
    if (month === m && year === y) {
      const cell = [...picker.querySelectorAll("td[data-month] a")].find((a) => Number(a.textContent) === d);
      return cell ? { path: pathOf(cell), day: true } : { error: `no day ${d} can be picked in the date picker` };
    }
    const nav = picker.querySelector(year * 12 + month > y * 12 + m ? ".ui-datepicker-prev" : ".ui-datepicker-next");
    if (!nav || nav.classList.contains("ui-state-disabled")) return { error: `the date picker cannot show ${value}` };
    return { path: pathOf(nav), day: false };
  };

  // After a page loads: every image its stylesheets name loaded (icons swapped on :hover), and whether a
  // :hover rule changes the layout (an icon swapped for an image, a size): only then must a press wait,
  // pointer on the element, until what is under the pointer settled.
  const LAYOUT = /(^|;)\s*(content|width|height|display|visibility|position|top|left|right|bottom|margin[a-z-]*|padding[a-z-]*|font-size|border(-[a-z]+)?-width)\s*:/;
  const prepareDocument = async () => {
    const urls = new Set();
    let hoverLayout = false;
    for (const sheet of document.styleSheets) {
      let rules = [];
      try { rules = sheet.cssRules; } catch (e) { continue; }
      for (const rule of rules) {
        for (const m of rule.cssText.matchAll(/url\(["']?([^"')]+)["']?\)/g)) urls.add(new URL(m[1], sheet.href || document.baseURI).href);
        if (rule.selectorText && rule.selectorText.includes(":hover") && LAYOUT.test(rule.style.cssText)) hoverLayout = true;
      }
    }
    api.images = await Promise.all([...urls].filter((u) => !u.startsWith("data:")).map((u) => {
      const img = new Image();
      img.src = u;
      return img.decode().then(() => img, () => null);
    }));
    return hoverLayout;
  };

  // A 106-bit digest of a string (two 53-bit cyrb53 hashes with different seeds), as 27 hex digits.
  const cyrb53 = (str, seed) => {
    let h1 = 0xdeadbeef ^ seed, h2 = 0x41c6ce57 ^ seed;
    for (let i = 0; i < str.length; i++) {
      const ch = str.charCodeAt(i);
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
  };
  const digest = (str) => cyrb53(str, 1) + cyrb53(str, 2).slice(1);

  const api = { clock, start, utterance, pathOf, locate, pointOf, prepare, rectOf, select, toggle, scroll, fill, clear,
    pickerStep, prepareDocument, hovered, highlight, digest, NativeDate, pointer: null, clipboard: "" };
  window.__s1 = api;
})();
