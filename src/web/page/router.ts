/**
 * The page's views by hash: `#/`, `#/agent/NAME`, `#/sent/NAME`, `#/thread/ID`, `#/search/TEXT`, `#/graph/PERIOD`,
 * `#/compose[/TO]`. Pure.
 */

export interface Route {
  view: string;
  arg: string;
}

export function routeOf(hash: string): Route {
  const parts = hash
    .replace(/^#\/?/, "")
    .split("/")
    .filter((part) => part !== "")
    .map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part;
      }
    });
  return { view: parts[0] ?? "room", arg: parts[1] ?? "" };
}
