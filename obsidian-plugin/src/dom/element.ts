/** A tiny helper for building DOM with the standard API (works in Obsidian and a plain page). */

export interface ElementSpec {
  cls?: string | string[];
  text?: string;
  title?: string;
  attrs?: Record<string, string>;
  style?: Record<string, string>;
}

/** Creates `<tag>` in `parent`'s document, appends it to `parent` and returns it. */
export function el<K extends keyof HTMLElementTagNameMap>(
  parent: HTMLElement,
  tag: K,
  spec: ElementSpec = {},
): HTMLElementTagNameMap[K] {
  // Obsidian's createEl (the browser tests' host page provides the same method in plain Chromium).
  const node = parent.createEl(tag);
  const classes = Array.isArray(spec.cls) ? spec.cls : spec.cls ? [spec.cls] : [];
  for (const c of classes.flatMap((x) => x.split(/\s+/))) if (c) node.classList.add(c);
  if (spec.text !== undefined) node.textContent = spec.text;
  if (spec.title !== undefined) node.title = spec.title;
  for (const [k, v] of Object.entries(spec.attrs ?? {})) node.setAttribute(k, v);
  for (const [k, v] of Object.entries(spec.style ?? {})) node.style.setProperty(k, v);
  parent.appendChild(node);
  return node;
}

/** Removes every child of `node`. */
export function clear(node: Element): void {
  while (node.firstChild) node.removeChild(node.firstChild);
}

/** A small coloured dot for a category. */
export function dot(parent: HTMLElement, colour: string, title?: string): HTMLSpanElement {
  return el(parent, "span", { cls: "palinode-dot", style: { "background-color": colour }, title });
}

/** A button whose click runs `onClick` once at a time (disabled while it runs). */
export function actionButton(
  parent: HTMLElement,
  text: string,
  onClick: () => unknown,
  spec: ElementSpec = {},
): HTMLButtonElement {
  const button = el(parent, "button", { ...spec, text });
  button.addEventListener("click", (ev) => {
    ev.preventDefault();
    ev.stopPropagation();
    if (button.disabled) return;
    button.disabled = true;
    void (async () => {
      try {
        await onClick();
      } finally {
        button.disabled = false;
      }
    })();
  });
  return button;
}
