/**
 * The claims (`#/claims`): who holds which paths, shared or exclusive, why, for how long, who waits; ended claims
 * (run out, their holder gone) until they are swept. The person may release a claim whose holder is gone.
 */
import type { ClaimRow } from "../../room/model.ts";
import { button } from "./cells.ts";
import type { PageActions, PageState } from "./context.ts";
import { ago } from "./format.ts";
import { h, link, type VNode } from "./vnode.ts";

/** How long is left, in a few characters: `42m left`; or `ran out`. */
export function timeLeft(iso: string, now = Date.now()): string {
  const left = Date.parse(iso) - now;
  if (!Number.isFinite(left) || left <= 0) return "ran out";
  return `${ago(new Date(now - left).toISOString(), now).replace(/ ago$/, "")} left`;
}

export function claimsTable(claims: readonly ClaimRow[], state: PageState, actions: PageActions): VNode {
  if (claims.length === 0) return h("p", { class: "note", id: "claims" }, "No claims.");
  const writes = !state.readOnly && state.human !== null;
  const rows = claims.map((claim) =>
    h(
      "tr",
      { "data-claim": claim.id, "data-holder": claim.holder, "data-state": claim.state, class: claim.holder_gone ? "holder-gone" : "" },
      h("td", { class: "path" }, claim.path),
      h("td", {}, link(claim.holder, "agent", claim.holder)),
      h("td", {}, claim.shared ? "shared" : "exclusive"),
      h("td", {}, claim.reason ?? ""),
      h("td", { class: "time" }, claim.state === "live" ? timeLeft(claim.expires_at) : `ended: ${claim.why}`),
      h("td", {}, claim.waiters.join(", ")),
      h(
        "td",
        {},
        claim.holder_gone && writes
          ? button("Release", "release", () => actions.act("/api/release", { id: claim.id }))
          : claim.holder_gone
            ? "holder gone"
            : "",
      ),
    ),
  );
  const head = h("tr", {}, ...["Path", "Holder", "", "Reason", "Time", "Waiting", ""].map((title) => h("th", {}, title)));
  return h("table", { class: "claims", id: "claims" }, h("thead", {}, head), h("tbody", {}, ...rows));
}

export function claimsView(state: PageState, actions: PageActions): VNode {
  return h(
    "div",
    {},
    h("h2", {}, `Claims (${state.claims.length})`),
    h(
      "p",
      { class: "note" },
      "Who holds which paths. A claim whose holder is gone (offline, or its window closed) no longer counts; release it here and its holder is told, by mail from you.",
    ),
    h("div", { class: "scroll" }, claimsTable(state.claims, state, actions)),
  );
}
