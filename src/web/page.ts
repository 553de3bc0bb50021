/**
 * The page's shell and its style sheet. The shell holds no data: the script (page/, served as `/app.js`) fetches
 * everything and builds the page with DOM calls. The token is the only value written into the HTML, and it is made
 * of URL-safe characters only (and escaped all the same).
 */

const escapeAttribute = (text: string) => text.replace(/[&"'<>]/g, (char) => `&#${char.charCodeAt(0)};`);

export function shellHtml(token: string): string {
  const query = `?token=${escapeAttribute(encodeURIComponent(token))}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>agentmail · the mail room</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/app.css${query}">
<script src="/app.js${query}" defer></script>
</head>
<body>
<header>
<h1><a href="#/">agentmail</a></h1>
<nav><a href="#/">Room</a><a href="#/needs">Needs you</a><a href="#/claims">Claims</a><a href="#/graph/24h">Who writes to whom</a><a href="#/search/">Search</a><a href="#/compose">Compose</a></nav>
<span id="who"></span>
<span id="status" class="status"></span>
</header>
<main id="main"><p>Loading…</p></main>
</body>
</html>
`;
}

export const STYLE = `
:root { color-scheme: light dark; --fg: #1d2125; --muted: #6b7280; --line: #e5e7eb; --bg: #ffffff; --panel: #f8fafc;
  --accent: #2563eb; --stored: #b45309; --read: #6b7280; --urgent: #dc2626; --human: #7c3aed; }
@media (prefers-color-scheme: dark) { :root { --fg: #e5e7eb; --muted: #9ca3af; --line: #374151; --bg: #111827;
  --panel: #1f2937; --accent: #60a5fa; --stored: #f59e0b; --read: #9ca3af; --urgent: #f87171; --human: #a78bfa; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 1.2rem; align-items: baseline; flex-wrap: wrap; padding: .6rem 1.2rem; border-bottom: 1px solid var(--line);
  background: var(--panel); position: sticky; top: 0; z-index: 1; }
header h1 { font-size: 1.1rem; margin: 0; }
header h1 a { color: var(--fg); text-decoration: none; }
nav { display: flex; gap: .9rem; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
#who { color: var(--muted); margin-left: auto; }
.status { font-size: .85rem; overflow-wrap: anywhere; white-space: normal; }
.status-ok { color: #16a34a; }
.status-error { color: var(--urgent); flex-basis: 100%; }
main { padding: 1rem 1.2rem; }
h2 { font-size: 1rem; margin: .2rem 0 .6rem; }
h2 small { font-weight: normal; margin-left: .6rem; }
/* Side by side only where both tables fit; below that the agents are above the mail, each as wide as the page. */
.room { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.3fr); gap: 1.4rem; align-items: start; }
@media (max-width: 1699px) { .room { grid-template-columns: minmax(0, 1fr); } }
.room > section, .room-page > section { min-width: 0; }
.scroll { overflow-x: auto; }
section.needs-you { border: 1px solid var(--stored); border-radius: .5rem; padding: .5rem .8rem; margin-bottom: 1rem; }
table.needs td.kind { color: var(--stored); font-weight: 600; white-space: nowrap; }
table.needs td.why { color: var(--muted); min-width: 14rem; }
tr.has-problem td.name a { font-weight: 600; }
.problem-word { font-weight: 600; font-size: .85rem; }
.problem-gone, .problem-unreachable { color: var(--urgent); }
.problem-stalled { color: var(--stored); }
td.problem-cell .reason { color: var(--muted); }
.person, .activity, .channel, .claims { color: var(--muted); }
button.filter { background: none; color: var(--accent); border: 1px solid var(--line); font-size: .8rem; padding: .1rem .5rem; margin-left: .5rem; }
p.mailman { color: var(--muted); font-size: .85rem; }
p.mailman.failing { color: var(--urgent); }
tr.holder-gone td.path { color: var(--urgent); }
.to { display: grid; gap: .2rem; }
.to-check { font-size: .85rem; overflow-wrap: anywhere; }
.to-check.ok { color: #16a34a; }
.to-check.error { color: var(--urgent); }
table { border-collapse: collapse; width: 100%; }
th { text-align: left; font-weight: 600; color: var(--muted); font-size: .8rem; border-bottom: 1px solid var(--line); padding: .3rem .5rem; }
td { border-bottom: 1px solid var(--line); padding: .3rem .5rem; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.unread { color: var(--stored); font-weight: 600; }
td.time, td.seen { white-space: nowrap; color: var(--muted); font-variant-numeric: tabular-nums; }
/* The subject takes what the other columns leave, cut with an ellipsis: it never widens its table. */
td.preview { max-width: 0; width: 100%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
td.who { white-space: nowrap; }
tr.human td:first-child a, .you { color: var(--human); }
.state { font-size: .8rem; white-space: nowrap; }
.state-stored { color: var(--stored); font-weight: 600; }
.state-read, .state-archived { color: var(--read); }
.state-bounced { color: var(--urgent); }
.status-word { font-size: .85rem; }
.status-ready { color: #16a34a; }
.status-offline { color: var(--muted); }
.marks span { font-size: .72rem; border-radius: .25rem; padding: 0 .3rem; margin-right: .25rem; border: 1px solid var(--line); }
.priority-urgent, .priority-high { color: var(--urgent); border-color: var(--urgent) !important; }
.type { color: var(--accent); }
.needs { color: var(--stored); }
article.message { border: 1px solid var(--line); border-radius: .5rem; padding: .6rem .8rem; margin: 0 0 .8rem; background: var(--panel); }
article .head { display: flex; gap: .6rem; flex-wrap: wrap; align-items: baseline; }
article .time, article .id { color: var(--muted); font-size: .85rem; }
article .subject { font-weight: 600; margin: .3rem 0; }
pre.body { white-space: pre-wrap; word-break: break-word; font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; margin: .4rem 0 0; }
.actions { margin-top: .5rem; display: flex; gap: .5rem; }
form.write { display: grid; gap: .5rem; max-width: 46rem; margin-top: 1rem; }
form.write h3 { margin: 0; font-size: .95rem; }
form.write label { display: grid; grid-template-columns: 6rem 1fr; gap: .5rem; align-items: start; }
input, select, textarea, button { font: inherit; color: inherit; background: var(--bg); border: 1px solid var(--line); border-radius: .35rem; padding: .3rem .5rem; }
textarea { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
button { cursor: pointer; background: var(--accent); color: white; border: none; justify-self: start; }
form.search { display: flex; gap: .5rem; margin-bottom: 1rem; }
form.search input { flex: 1; max-width: 30rem; }
.note { color: var(--muted); }
.error { color: var(--urgent); }
svg#graph { max-width: 100%; height: auto; }
svg .node { fill: var(--panel); stroke: var(--accent); stroke-width: 2; }
svg .node.human { stroke: var(--human); }
svg .name { font-size: 13px; fill: var(--fg); font-weight: 600; paint-order: stroke; stroke: var(--bg); stroke-width: 3px; }
svg line { stroke: var(--accent); stroke-opacity: .45; }
svg .loop { fill: none; stroke: var(--accent); stroke-opacity: .55; }
svg .arrowhead { fill: var(--accent); }
svg .count { font-size: 11px; fill: var(--fg); text-anchor: middle; paint-order: stroke; stroke: var(--bg); stroke-width: 3px; }
`;
