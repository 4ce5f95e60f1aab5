/* Tables that fit their column (the rules beside `table.benign-cards` in benign.css).
   A table is laid out at max(its min-content width, min(its max-content width, its column)): it fits whenever its
   min-content width does. So each table, measured in the browser at the width the reader has, gets only what it needs:
   0. a cell that holds one number keeps it on one line (benign-number);
   1. a long name in a cell (a file, `np.random.default_rng(seed)`) is given places to break, after . _ / : , ( = and
      before an upper-case letter that follows a lower-case one, so it no longer sets its column's narrowest width;
   2. still too wide in a window under `CARDS` px (a phone): it is laid out as cards (benign-cards), each cell under
      its column's header: the `data-label` the book's tables carry, or the header's text, written here for the tables
      of Markdown; a cell's content is put in one box (benign-value) beside its label;
   3. still too wide in a wider window: its cells are padded less (benign-tight), and if that is not enough its
      headers may break inside a word (benign-broken).
   Then a formula still wider than its cell is scaled down to fit it. Measured again whenever the column or a table
   changes size (a window resized, MathJax typeset in a cell). Without this script every table is laid out as before. */
(() => {
  "use strict";
  const TIGHT = "benign-tight", CARDS_CLASS = "benign-cards", BROKEN = "benign-broken", CARDS = 600;
  const BREAKS = /([._/:,(=])(?=[^\s])|([a-z])(?=[A-Z])/g;
  const LONG = 14;  // characters: a shorter word keeps its column no wider than a number does
  const POWER = "10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+";  // 10⁻⁶, as words.tiny writes it
  const NUMBER = new RegExp(
    `^((below|above|under|about|over) )?[−+±≈<>≤≥-]?(\\d[\\d.,]*|${POWER})( ?%| ?× ?${POWER})?$`);

  function overflows(table) {  // wider than the box it sits in (its scroll box, or its column), or scrolling there
    const box = table.parentElement, style = getComputedStyle(box);
    const room = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return table.getBoundingClientRect().width > room + 1 || box.scrollWidth > box.clientWidth + 1;
  }

  function breakable(table) {  // step 1, once per table: <wbr> in long words of its cells (not in a formula)
    if (table.dataset.benignBreaks) return;
    table.dataset.benignBreaks = "1";
    const walker = document.createTreeWalker(table, NodeFilter.SHOW_TEXT, {
      acceptNode: n => (n.parentElement.closest("mjx-container, .math, script, style") || /\\\(|\$/.test(n.data))
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
    const nodes = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode())
      if (n.data.split(/\s+/).some(w => w.length >= LONG && !/^[-−+]?[\d.,]+%?$/.test(w))) nodes.push(n);
    for (const node of nodes) {
      const parts = node.data.split(/(\s+)/), out = document.createDocumentFragment();
      for (const part of parts) {
        if (part.length < LONG || /\s/.test(part)) { out.append(part); continue; }
        part.replace(BREAKS, "$1$2\u0000").split("\u0000").forEach((piece, k) => {
          if (k) out.append(document.createElement("wbr"));
          out.append(piece);
        });
      }
      node.replaceWith(out);
    }
  }

  function headers(table) {  // the text of each column's header, from its last header row
    const head = table.tHead ? table.tHead.rows[table.tHead.rows.length - 1] : table.rows[0];
    return head ? Array.from(head.cells).map(c => c.innerText.replace(/\s+/g, " ").trim()) : [];
  }

  function asCards(table) {  // step 2: labels where the table has none, each cell's content in one box
    const labels = headers(table);
    const head = table.tHead ? null : table.rows[0];
    if (head && Array.from(head.cells).every(c => c.tagName === "TH")) head.classList.add("benign-head");
    for (const row of table.tBodies.length ? Array.from(table.tBodies).flatMap(b => Array.from(b.rows)) : []) {
      Array.from(row.cells).forEach((cell, k) => {
        if (!cell.hasAttribute("data-label")) cell.setAttribute("data-label", labels[k] || "");
        if (cell.children.length === 1 && cell.firstElementChild.classList.contains("benign-value")) return;
        const value = document.createElement("div");
        value.className = "benign-value";
        value.append(...cell.childNodes);
        cell.append(value);
      });
    }
    table.classList.add(CARDS_CLASS);
  }

  function shrinkFormulas(table) {  // a formula wider than its cell is scaled to fit it, never cut
    for (const math of table.querySelectorAll("mjx-container")) {
      const cell = math.closest(".benign-value, td, th");  // a card's value, or the cell
      if (!cell) continue;
      const style = getComputedStyle(cell);
      const room = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      const width = math.getBoundingClientRect().width;
      if (room > 0 && width > room + 1) math.style.fontSize = `${Math.floor(100 * room / width)}%`;
    }
  }

  function numbers(table) {  // a cell that holds one number ('95.3 %', 'below 10⁻⁶') keeps it on one line
    for (const cell of table.querySelectorAll("td"))
      if (NUMBER.test(cell.textContent.trim())) cell.classList.add("benign-number");
  }

  function fit(table) {
    table.classList.remove(TIGHT, CARDS_CLASS, BROKEN);  // measured afresh, as it is laid out with no help
    table.querySelectorAll("mjx-container").forEach(math => { math.style.fontSize = ""; });
    numbers(table);
    if (overflows(table)) breakable(table);
    if (overflows(table)) {
      if (window.innerWidth < CARDS) asCards(table);
      else table.classList.add(TIGHT);
    }
    if (table.classList.contains(TIGHT) && overflows(table)) table.classList.add(BROKEN);
    shrinkFormulas(table);
  }

  function start() {
    const article = document.querySelector("article");
    if (!article) return;
    const tables = () => article.querySelectorAll("table");
    let pending = false;
    const fitAll = () => {
      pending = false;
      tables().forEach(fit);
    };
    fitAll();
    if (!window.ResizeObserver) return;
    // Fitting changes sizes, so it waits for the next frame (no resize loop); it settles after one more round.
    const observer = new ResizeObserver(() => {
      if (!pending) {
        pending = true;
        requestAnimationFrame(fitAll);
      }
    });
    observer.observe(article);
    tables().forEach(t => observer.observe(t));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
