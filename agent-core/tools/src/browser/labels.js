// With `true`, outlines each element that has a ref and is in view, with its ref as a tag, in
// an overlay of its own; with `false`, removes the overlay. Refs are found across open shadow
// roots, as snapshots assign them.
(show) => {
  const ID = "__larik_labels";
  document.getElementById(ID)?.remove();
  if (!show) return 0;
  const overlay = document.createElement("div");
  overlay.id = ID;
  overlay.style.cssText = "position:absolute;left:0;top:0;width:0;height:0;z-index:2147483647;pointer-events:none;";
  const tagged = [];
  const collect = (root) => {
    for (const element of root.querySelectorAll("[data-larik-ref]")) tagged.push(element);
    for (const element of root.querySelectorAll("*")) if (element.shadowRoot) collect(element.shadowRoot);
  };
  collect(document);
  let shown = 0;
  for (const element of tagged) {
    const r = element.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || r.bottom < 0 || r.right < 0 || r.top > innerHeight || r.left > innerWidth) continue;
    const box = document.createElement("div");
    box.style.cssText = `position:absolute;left:${r.left + scrollX}px;top:${r.top + scrollY}px;width:${r.width}px;height:${r.height}px;outline:2px dashed #e8590c;box-sizing:border-box;`;
    const tag = document.createElement("span");
    tag.textContent = element.getAttribute("data-larik-ref");
    tag.style.cssText = "position:absolute;left:0;top:-14px;font:bold 11px/13px monospace;background:#e8590c;color:#fff;padding:0 3px;";
    box.appendChild(tag);
    overlay.appendChild(box);
    shown++;
  }
  document.documentElement.appendChild(overlay);
  return shown;
}
