/**
 * Turns the views' nodes (vnode.ts) into DOM elements: every value through setAttribute or a text node, never
 * innerHTML (the CSP requires Trusted Types for that, with no policy, so it would throw).
 */
import type { Child } from "./vnode.ts";

const SVG = "http://www.w3.org/2000/svg";

export function mount(child: Child): Element | Text {
  if (typeof child === "string") return document.createTextNode(child);
  const element = child.svg ? document.createElementNS(SVG, child.tag) : document.createElement(child.tag);
  for (const [name, value] of Object.entries(child.attrs)) element.setAttribute(name, value);
  for (const each of child.children) element.append(mount(each));
  for (const [type, listener] of Object.entries(child.on ?? {})) {
    element.addEventListener(type, (event) => listener(element, event));
  }
  return element;
}

/** An element made from a node known to be one (not text). */
export const mountElement = (child: Child): Element => mount(child) as Element;
