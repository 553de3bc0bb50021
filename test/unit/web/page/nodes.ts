/** Reading the page's view nodes (src/web/page/vnode.ts) in process, as a test would read the DOM. */
import type { Child, VNode } from "../../../../src/web/page/vnode.ts";

/** A node's text, as textContent would give it. */
export function textOf(child: Child): string {
  if (typeof child === "string") return child;
  let text = "";
  for (const each of child.children) text += textOf(each);
  return text;
}

/** The nodes of the tree (itself first) that `test` accepts, in document order. */
export function findAll(root: Child, test: (node: VNode) => boolean): VNode[] {
  if (typeof root === "string") return [];
  const found: VNode[] = test(root) ? [root] : [];
  for (const child of root.children) found.push(...findAll(child, test));
  return found;
}

/** The first node with this tag and these attributes (`undefined` value: the attribute is there), or a failure. */
export function find(root: Child, tag: string, attrs: Record<string, string | undefined> = {}): VNode {
  const [found] = findAll(
    root,
    (node) =>
      node.tag === tag &&
      Object.entries(attrs).every(([name, value]) => (value === undefined ? name in node.attrs : node.attrs[name] === value)),
  );
  if (!found) throw new Error(`no <${tag}> with ${JSON.stringify(attrs)} in ${toHtml(root).slice(0, 400)}`);
  return found;
}

/** The tree as HTML, every value escaped. */
export function toHtml(child: Child): string {
  if (typeof child === "string") return escapeHtml(child);
  const attrs = Object.entries(child.attrs)
    .map(([name, value]) => ` ${name}="${escapeHtml(value)}"`)
    .join("");
  return `<${child.tag}${attrs}>${child.children.map(toHtml).join("")}</${child.tag}>`;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
