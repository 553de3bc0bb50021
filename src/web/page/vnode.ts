/**
 * The page's views are pure: functions from the room's data to a tree of these nodes, which mount.ts turns into DOM
 * elements in the browser and the tests read in process. A value goes into a node as text or as an attribute, never
 * as markup, so a body of `<script>` shows as those characters; the only links are the page's own (`#/…`).
 */

/** An element: its tag, attributes (set with setAttribute), children, and what it does when clicked, submitted or changed. */
export interface VNode {
  tag: string;
  /** Made in the SVG namespace (the graph). */
  svg?: boolean;
  attrs: Record<string, string>;
  children: Child[];
  on?: Handlers;
}

export type Child = VNode | string;
/** What a view may pass as a child: nothing (null, undefined, false) is left out. */
export type MaybeChild = Child | null | undefined | false;

/** Listeners by event type; each gets the element it is on and the event (mount.ts). */
export type Handlers = Partial<Record<"click" | "submit" | "change" | "keydown", (element: Element, event: Event) => void>>;

function node(tag: string, svg: boolean, attrs: Record<string, string | number>, children: MaybeChild[]): VNode {
  const strings: Record<string, string> = {};
  for (const [name, value] of Object.entries(attrs)) strings[name] = String(value);
  const kept: Child[] = [];
  for (const child of children) if (child !== null && child !== undefined && child !== false) kept.push(child);
  return svg ? { tag, svg, attrs: strings, children: kept } : { tag, attrs: strings, children: kept };
}

/** An HTML element. */
export function h(tag: string, attrs: Record<string, string | number> = {}, ...children: MaybeChild[]): VNode {
  return node(tag, false, attrs, children);
}

/** An SVG element. */
export function s(tag: string, attrs: Record<string, string | number> = {}, ...children: MaybeChild[]): VNode {
  return node(tag, true, attrs, children);
}

/** The node with listeners added. */
export function on(target: VNode, handlers: Handlers): VNode {
  target.on = { ...target.on, ...handlers };
  return target;
}

/** A link to one of the page's own views: the only URLs the page makes, from parts it encodes. */
export function link(text: string, ...parts: string[]): VNode {
  return h("a", { href: `#/${parts.map(encodeURIComponent).join("/")}` }, text);
}
