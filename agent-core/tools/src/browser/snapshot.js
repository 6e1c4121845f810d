// An outline of what a user sees on the page: headings, text, and the elements one can act on,
// each tagged with a `data-larik-ref` that later snapshots of the same document reuse. Open
// shadow roots are walked too; `window.__larikFind(ref)` finds a ref across them.
(() => {
  const REF = "data-larik-ref";
  if (!window.__larikFind) {
    window.__larikFind = (ref) => {
      const inside = (root) => {
        const found = root.querySelector(`[${REF}="${CSS.escape(ref)}"]`);
        if (found) return found;
        for (const element of root.querySelectorAll("*")) {
          if (element.shadowRoot) {
            const deeper = inside(element.shadowRoot);
            if (deeper) return deeper;
          }
        }
        return null;
      };
      return inside(document);
    };
  }
  window.__larikNextRef = window.__larikNextRef || 1;

  const INTERACTIVE_ROLES = new Set(["button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "option", "textbox", "combobox", "searchbox", "slider", "spinbutton"]);
  const SKIPPED = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "SVG"]);
  const clean = (text, limit) => {
    const one = (text || "").replace(/\s+/g, " ").trim();
    return one.length > limit ? one.slice(0, limit - 1) + "…" : one;
  };
  const visible = (element) => {
    if (element.checkVisibility && !element.checkVisibility({ visibilityProperty: true, opacityProperty: false })) return false;
    const rect = element.getBoundingClientRect();
    return rect.width > 0 || rect.height > 0 || element.getClientRects().length > 0;
  };
  const interactive = (element) => {
    const tag = element.tagName;
    if (tag === "A" && element.hasAttribute("href")) return true;
    if (tag === "BUTTON" || tag === "SELECT" || tag === "TEXTAREA" || tag === "SUMMARY") return true;
    if (tag === "INPUT") return element.type !== "hidden";
    if (element.isContentEditable && !(element.parentElement && element.parentElement.isContentEditable)) return true;
    const role = element.getAttribute("role");
    if (role && INTERACTIVE_ROLES.has(role)) return true;
    return element.hasAttribute("onclick") || (element.tabIndex >= 0 && element.hasAttribute("tabindex"));
  };
  const labelled = (element) => {
    const aria = element.getAttribute("aria-label");
    if (aria) return aria;
    const by = element.getAttribute("aria-labelledby");
    if (by) {
      const root = element.getRootNode();
      const text = by.split(/\s+/).map((id) => (root.getElementById ? root.getElementById(id) : document.getElementById(id))?.innerText || "").join(" ");
      if (text.trim()) return text;
    }
    if (element.labels && element.labels.length) return Array.from(element.labels).map((label) => label.innerText).join(" ");
    if (element.tagName === "INPUT" && ["submit", "button", "reset"].includes(element.type)) return element.value;
    if (element.tagName === "SELECT" || element.tagName === "TEXTAREA" || element.tagName === "INPUT") {
      return element.getAttribute("placeholder") || element.getAttribute("title") || element.getAttribute("name") || "";
    }
    return element.innerText || element.getAttribute("title") || element.getAttribute("alt") || element.querySelector?.("img[alt]")?.alt || "";
  };
  const kind = (element) => {
    const role = element.getAttribute("role");
    if (role) return role;
    switch (element.tagName) {
      case "A": return "link";
      case "BUTTON": case "SUMMARY": return "button";
      case "SELECT": return "combobox";
      case "TEXTAREA": return "textbox";
      case "INPUT": {
        const type = element.type;
        if (["checkbox", "radio", "range", "file", "color", "date"].includes(type)) return type;
        if (["submit", "button", "reset", "image"].includes(type)) return "button";
        return "textbox";
      }
    }
    return element.isContentEditable ? "textbox" : "clickable";
  };
  const refOf = (element) => {
    let ref = element.getAttribute(REF);
    if (!ref) {
      ref = "e" + window.__larikNextRef++;
      element.setAttribute(REF, ref);
    }
    return ref;
  };

  const lines = [];
  const describe = (element) => {
    const ref = refOf(element);
    let line = `${kind(element)} "${clean(labelled(element), 80)}" [ref=${ref}]`;
    const tag = element.tagName;
    if ((tag === "INPUT" || tag === "TEXTAREA") && !["checkbox", "radio", "submit", "button", "reset"].includes(element.type)) {
      line += element.type === "password" ? (element.value ? " value=(hidden)" : "") : element.value ? ` value="${clean(element.value, 80)}"` : "";
    }
    if (element.type === "checkbox" || element.type === "radio") line += element.checked ? " checked" : "";
    if (tag === "SELECT") {
      const chosen = Array.from(element.selectedOptions).map((option) => option.text).join(", ");
      const options = Array.from(element.options).map((option) => option.text).slice(0, 20).join(" | ");
      line += ` selected="${clean(chosen, 60)}" options: ${clean(options, 200)}`;
    }
    if (tag === "A") line += ` -> ${element.getAttribute("href")}`;
    if (element.disabled) line += " disabled";
    return line;
  };
  const walk = (node, depth) => {
    if (lines.length > 4000) return;
    if (node.nodeType === Node.TEXT_NODE) {
      const text = clean(node.textContent, 300);
      if (text) lines.push("  ".repeat(depth) + `text "${text}"`);
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE && node.nodeType !== Node.DOCUMENT_FRAGMENT_NODE) return;
    if (node.nodeType === Node.ELEMENT_NODE) {
      if (SKIPPED.has(node.tagName) || node.getAttribute("aria-hidden") === "true" || !visible(node)) return;
      if (interactive(node)) {
        lines.push("  ".repeat(depth) + describe(node));
        return;
      }
      const heading = /^H([1-6])$/.exec(node.tagName);
      if (heading) {
        lines.push("  ".repeat(depth) + `heading "${clean(node.innerText, 200)}" [level=${heading[1]}]`);
        return;
      }
      if (node.tagName === "IMG" && node.alt) lines.push("  ".repeat(depth) + `img "${clean(node.alt, 80)}"`);
      if (node.shadowRoot) walk(node.shadowRoot, depth);
    }
    const deeper = node.nodeType === Node.ELEMENT_NODE && ["UL", "OL", "NAV", "FORM", "DIALOG", "TABLE", "FIELDSET"].includes(node.tagName) ? depth + 1 : depth;
    for (const child of node.childNodes) walk(child, deeper);
  };
  walk(document.body || document.documentElement, 0);
  return { title: document.title, url: location.href, lines };
})()
