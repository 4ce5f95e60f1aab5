/* Tables too wide for their column (the rule beside `table.benign-wide` in benign.css).
   A table in its scroll box is laid out at max(its min-content width, min(its max-content width, the box)): it fits
   whenever its min-content width does, squeezing its columns. So the box scrolls, with the table unmarked, exactly
   when the table cannot fit even at its narrowest; then it is marked benign-wide and laid out at its natural width
   (benign.css caps each cell). A table that fits stays unmarked and keeps fitting. A Markdown table (its own scroll
   box: `article table`) is first put in a box of the generated tables' kind (benign-table-box), since a table cannot
   be laid out wider than itself. Measured again whenever the column or a table changes size (a window resized,
   MathJax typeset in a cell); without this script every table is laid out as before. */
(() => {
  "use strict";
  const WIDE = "benign-wide";

  function box(table) {
    const parent = table.parentElement;
    return parent.classList.contains("benign-table-box") ? parent : table;
  }

  function mark(table) {
    table.classList.remove(WIDE);
    let scroller = box(table);
    if (scroller.scrollWidth <= scroller.clientWidth + 1) return;  // it fits at its narrowest: left as it is
    if (scroller === table) {
      scroller = document.createElement("div");
      scroller.className = "benign-table-box";
      table.before(scroller);
      scroller.append(table);
    }
    table.classList.add(WIDE);
  }

  function start() {
    const article = document.querySelector("article");
    if (!article) return;
    const tables = () => article.querySelectorAll("table");
    let pending = false;
    const markAll = () => {
      pending = false;
      tables().forEach(mark);
    };
    markAll();
    if (!window.ResizeObserver) return;
    // Marking changes sizes, so it waits for the next frame (no resize loop); it settles after one more round.
    const observer = new ResizeObserver(() => {
      if (!pending) {
        pending = true;
        requestAnimationFrame(markAll);
      }
    });
    observer.observe(article);
    tables().forEach(t => observer.observe(t));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
