/**
 * Who writes to whom (`#/graph/PERIOD`): the agents on a circle, each next to those it writes to most, an arrow per
 * pair that wrote, as thick as its mail and labelled with its count.
 */
import type { Graph } from "../../room/model.ts";
import { select } from "./cells.ts";
import type { PageActions } from "./context.ts";
import { h, on, s, type VNode } from "./vnode.ts";

export const PERIODS = [
  ["1h", "last hour"],
  ["24h", "last 24 hours"],
  ["7d", "last 7 days"],
  ["30d", "last 30 days"],
  ["all", "all time"],
] as const;

export function graphView(graph: Graph, period: string, human: string | null, actions: PageActions): VNode {
  const chooser = on(select("period", PERIODS, period), {
    change(element) {
      actions.go(`#/graph/${encodeURIComponent((element as HTMLSelectElement).value)}`);
    },
  });
  return h(
    "div",
    { class: "graph" },
    h("h2", {}, "Who writes to whom ", chooser),
    graph.edges.length === 0 ? h("p", {}, "No mail in this period.") : drawGraph(graph, human),
  );
}

/**
 * The order of the agents around the circle: each next to the one it exchanges the most mail with (a greedy chain
 * from the busiest), so most arrows are short and few cross.
 */
export function circleOrder(graph: Graph): { order: string[]; total: Map<string, number> } {
  const pair = new Map<string, number>();
  const total = new Map<string, number>();
  const key = (a: string, b: string) => (a < b ? `${a}\n${b}` : `${b}\n${a}`);
  for (const edge of graph.edges) {
    pair.set(key(edge.from, edge.to), (pair.get(key(edge.from, edge.to)) ?? 0) + edge.count);
    total.set(edge.from, (total.get(edge.from) ?? 0) + edge.count);
    total.set(edge.to, (total.get(edge.to) ?? 0) + edge.count);
  }
  const between = (a: string, b: string) => pair.get(key(a, b)) ?? 0;
  const left = new Set(graph.nodes);
  const busiest = [...left].sort((a, b) => (total.get(b) ?? 0) - (total.get(a) ?? 0))[0]!;
  const order = [busiest];
  left.delete(busiest);
  while (left.size > 0) {
    const last = order[order.length - 1]!;
    let best = "";
    let score = -1;
    for (const node of left) {
      const value = 2 * between(last, node) + between(order[0]!, node);
      if (value > score || (value === score && (total.get(node) ?? 0) > (total.get(best) ?? 0))) {
        best = node;
        score = value;
      }
    }
    order.push(best);
    left.delete(best);
  }
  return { order, total };
}

/** Agents on a circle, as large as their traffic; an arrow per pair that wrote, as thick as its mail, with the count. */
export function drawGraph(graph: Graph, human: string | null): VNode {
  const size = 820;
  const centre = size / 2;
  const radius = size / 2 - 110;
  const marker = s(
    "marker",
    {
      id: "arrow",
      viewBox: "0 0 10 10",
      refX: 10,
      refY: 5,
      markerUnits: "userSpaceOnUse",
      markerWidth: 11,
      markerHeight: 11,
      orient: "auto-start-reverse",
    },
    s("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }),
  );
  const svg = s("svg", { viewBox: `0 0 ${size} ${size}`, width: size, height: size, id: "graph", role: "img" }, s("defs", {}, marker));
  const { order, total } = circleOrder(graph);
  const busiest = Math.max(1, ...total.values());
  const sizeOf = (node: string) => 10 + 14 * Math.sqrt((total.get(node) ?? 0) / busiest);
  const at = new Map<string, { x: number; y: number; angle: number }>();
  order.forEach((node, i) => {
    const angle = (2 * Math.PI * i) / order.length - Math.PI / 2;
    at.set(node, { x: centre + radius * Math.cos(angle), y: centre + radius * Math.sin(angle), angle });
  });
  const most = Math.max(...graph.edges.map((edge) => edge.count));
  const labels: VNode[] = [];
  for (const edge of graph.edges) {
    const from = at.get(edge.from)!;
    const to = at.get(edge.to)!;
    const group = s(
      "g",
      { class: "edge", "data-from": edge.from, "data-to": edge.to, "data-count": edge.count },
      s("title", {}, `${edge.from} → ${edge.to}: ${edge.count}`),
    );
    const width = 1 + (6 * Math.log1p(edge.count)) / Math.log1p(most);
    if (edge.from === edge.to) {
      const out = { x: Math.cos(from.angle), y: Math.sin(from.angle) };
      const loop = sizeOf(edge.from) + 12;
      group.children.push(
        s("circle", { cx: from.x + out.x * loop, cy: from.y + out.y * loop, r: 12, class: "loop", "stroke-width": width }),
      );
      labels.push(s("text", { x: from.x + out.x * (loop + 22), y: from.y + out.y * (loop + 22) + 4, class: "count" }, String(edge.count)));
    } else {
      // Offset to the right of the direction, so a→b and b→a are two arrows side by side; ends at each circle.
      const dx = to.x - from.x;
      const dy = to.y - from.y;
      const length = Math.hypot(dx, dy) || 1;
      const ux = dx / length;
      const uy = dy / length;
      const ox = -uy * 5;
      const oy = ux * 5;
      const start = sizeOf(edge.from) + 2;
      const end = sizeOf(edge.to) + 3;
      group.children.push(
        s("line", {
          x1: from.x + ux * start + ox,
          y1: from.y + uy * start + oy,
          x2: to.x - ux * end + ox,
          y2: to.y - uy * end + oy,
          "stroke-width": width,
          "marker-end": "url(#arrow)",
        }),
      );
      // The count a third of the way from the sender, so the two directions of a pair do not share a spot.
      labels.push(
        s("text", { x: from.x + dx * 0.36 + ox * 2.6, y: from.y + dy * 0.36 + oy * 2.6 + 4, class: "count" }, String(edge.count)),
      );
    }
    svg.children.push(group);
  }
  svg.children.push(...labels);
  for (const node of order) {
    const { x, y, angle } = at.get(node)!;
    const r = sizeOf(node);
    const cos = Math.cos(angle);
    svg.children.push(
      s(
        "a",
        { href: `#/agent/${encodeURIComponent(node)}` },
        s("circle", { cx: x, cy: y, r, class: node === human ? "node human" : "node" }),
        s(
          "text",
          {
            x: x + cos * (r + 8),
            y: y + Math.sin(angle) * (r + 8) + 4,
            class: "name",
            "text-anchor": cos > 0.3 ? "start" : cos < -0.3 ? "end" : "middle",
          },
          node,
        ),
      ),
    );
  }
  return svg;
}
