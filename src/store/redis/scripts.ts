import { Script } from "./connection.ts";

/**
 * The Lua scripts of the Redis store. Each runs atomically on the server, so every step of delivery is one round
 * trip with no race between receivers on any host. Names never appear in a script's source: they come in as
 * arguments, and in keys only encoded (mail/names.ts). Keys (P = the namespace's prefix, N = a mailbox's encoded
 * name, S = a sender's encoded name):
 *
 *   P mail:N     stream  the live mailbox: one entry per message, fields `id` and `record` (the message's JSON
 *                        record, unread, without read_at); an id has more than one entry only when a copy
 *                        `agentmail name` moved came back (APPEND), and ids:N names the newest
 *   P read:N     hash    stream id -> read_at, for every read live message
 *   P lease:N    hash    stream id -> "<expiry ms>|<token>|<holder>", for every message being shown
 *   P cursor:N   string  a stream id: every entry up to it is read (a hint that spares a take the scan)
 *   P ids:N      hash    message id -> stream id, for every live message
 *   P bell:N     stream  one entry (MAXLEN 1), re-added whenever mail becomes takeable: what a waiter blocks on
 *   P arch:N     stream  the mailbox's archive: fields `id`, `record` (as in mail:N) and `read_at` ('' when unread)
 *   P archids:N  hash    message id -> stream id in arch:N
 *   P sent:S     stream  the copies S sent, oldest first: fields `to` (the mailbox) and `id`
 *   P unread     hash    mailbox -> number of unread messages; its fields are the mailboxes with live mail
 *   P archived   set     the mailboxes with an archive
 *   P bell       stream  the namespace's bell (`to` = the mailbox), for waiting on every mailbox
 *   P lists      stream  rung when a group or role list changes (MAXLEN 1)
 *   P groups, P roles   string  the lists as one JSON object (name -> members)
 *   P agents     hash    agent name -> its JSON registry document (registry.ts)
 *   P moved      string  where the namespace's mail moved (store/moved.ts), set by migrate: while it is there,
 *                        sending, taking and every command of an agent are refused (notMoved below)
 *   P claims     string  the claims on paths as one JSON document, `{"claims": [...]}` (src/claims/claims.ts)
 *   P delivery:N stream  the mailbox's delivery record: one entry per event, field `event` (its JSON object,
 *                        mail/arrival.ts), never rewritten
 *   P announced:N hash   message id -> '1' for the unread messages an event announces (what a hook leaves alone)
 *   P rbell:N    stream  one entry (MAXLEN 1), re-added when a message of the mailbox is read or gets a delivery
 *                        event: what a sender waiting for a receipt blocks on
 *   P sync       string  a time, set by a durable script retried after a lost connection, so the WAIT after it
 *                        covers what the server held before (connection.ts); read by nothing
 *
 * Times that decide something across hosts come from the server's clock (TIME), so hosts with skewed clocks agree
 * on when a lease runs out or a name was last used.
 */

/** A script that changes mail: done only once `replicas=` replicas acknowledge it (connection.ts). */
const durable = (source: string) => new Script(source, { durable: true });

const NOW = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
`;

const FIELD = `
local function field(fields, name)
  for i = 1, #fields, 2 do
    if fields[i] == name then return fields[i + 1] end
  end
  return ''
end
`;

/** The expiry and token of a lease value "<expiry>|<token>|<holder>". */
const LEASE = `
local function lease_parts(lease)
  local first = string.find(lease, '|', 1, true)
  local second = string.find(lease, '|', first + 1, true)
  return tonumber(string.sub(lease, 1, first - 1)), string.sub(lease, first + 1, second - 1)
end
`;

/**
 * Refuses the script when the namespace's mail moved: KEYS[n] is the moved key. Checked inside the scripts that
 * send, take and register a caller, so no command pays a round trip for it, and a send or take that runs after
 * migrate set the key is refused whatever the caller looked at before.
 */
const notMoved = (n: number) => `
local moved_to = redis.call('GET', KEYS[${n}])
if moved_to then return redis.error_reply('AGENTMAIL_REFUSED ' .. moved_to) end
`;

/**
 * Leases and the cursor are not written to the AOF or to replicas: a lost lease only makes its message takeable
 * again (shown at most once more, as when a receiver dies) and the cursor is a hint. So taking costs no fsync, and a
 * receive one (its acknowledgement) instead of two.
 */
const UNLOGGED = `
redis.set_repl(redis.REPL_NONE)
`;

/**
 * Walks the mailbox from the cursor, oldest first, over entries that are neither read nor under a live lease,
 * calling visit(entry) until it returns true; moves the cursor past the read entries at the front. Collects the
 * live leases passed over (stream id, lease value, ...), so the caller can break those of dead holders on its host.
 * KEYS[1..4]: mail, read, lease, cursor.
 */
const WALK = `${NOW}${LEASE}
local skipped = {}
local function walk(visit)
  local from = '(' .. (redis.call('GET', KEYS[4]) or '0-0')
  local front = nil
  local at_front = true
  while true do
    local batch = redis.call('XRANGE', KEYS[1], from, '+', 'COUNT', 100)
    if #batch == 0 then break end
    for _, entry in ipairs(batch) do
      local sid = entry[1]
      if redis.call('HEXISTS', KEYS[2], sid) == 1 then
        if at_front then front = sid end
      else
        at_front = false
        local lease = redis.call('HGET', KEYS[3], sid)
        if lease and lease_parts(lease) > now then
          skipped[#skipped + 1] = sid
          skipped[#skipped + 1] = lease
        elseif visit(entry) then
          if front then redis.call('SET', KEYS[4], front) end
          return
        end
      end
      from = '(' .. sid
    end
  end
  if front then redis.call('SET', KEYS[4], front) end
end
`;

/** The move count of a stored record (mail/message.ts movesOf): 0 when it has none, or is not a record. */
const MOVES = `
local function moves_of(record)
  local ok, decoded = pcall(cjson.decode, record)
  if ok and type(decoded) == 'table' and type(decoded.moves) == 'number' then return decoded.moves end
  return 0
end
`;

/**
 * KEYS: mail, read, ids, bell, archids, sent, unread, namespace bell, arch, lease, moved. ARGV: mailbox, id,
 * record, read_at ('' for unread), '1' to index it under its sender, the record's move count, the time now (ISO
 * 8601). Stores one message, unless the mailbox holds its id already, live or archived (a retried send, a resumed
 * migration or import). A copy `agentmail name` moved (a count above 0) is judged as mail/moves.ts takesMovedCopy
 * says, against the id's record (live, then archived): not stored when that was moved as often or more; otherwise
 * stored as the id's record, and a live record it supersedes that is still unread (a move killed after its copy,
 * then moved back) is marked read, so the message is delivered once. Returns 1 when stored, 0 when it was there.
 */
export const APPEND = durable(`${notMoved(11)}${FIELD}${MOVES}
local moves = tonumber(ARGV[6]) or 0
local superseded = nil
if moves == 0 then
  if redis.call('HEXISTS', KEYS[3], ARGV[2]) == 1 or redis.call('HEXISTS', KEYS[5], ARGV[2]) == 1 then return 0 end
else
  local held = redis.call('HGET', KEYS[3], ARGV[2])
  local entry = held and redis.call('XRANGE', KEYS[1], held, held)[1]
  if entry then
    if moves_of(field(entry[2], 'record')) >= moves then return 0 end
    if redis.call('HEXISTS', KEYS[2], held) == 0 then superseded = held end
  end
  local archived = redis.call('HGET', KEYS[5], ARGV[2])
  entry = archived and redis.call('XRANGE', KEYS[9], archived, archived)[1]
  if entry and moves_of(field(entry[2], 'record')) >= moves then return 0 end
end
if superseded then
  redis.call('HSET', KEYS[2], superseded, ARGV[7])
  redis.call('HDEL', KEYS[10], superseded)
  redis.call('HINCRBY', KEYS[7], ARGV[1], -1)
end
local sid = redis.call('XADD', KEYS[1], '*', 'id', ARGV[2], 'record', ARGV[3])
redis.call('HSET', KEYS[3], ARGV[2], sid)
if ARGV[5] == '1' then redis.call('XADD', KEYS[6], '*', 'to', ARGV[1], 'id', ARGV[2]) end
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[2], sid, ARGV[4])
  redis.call('HINCRBY', KEYS[7], ARGV[1], 0)
else
  redis.call('HINCRBY', KEYS[7], ARGV[1], 1)
  redis.call('XADD', KEYS[4], 'MAXLEN', '1', '*', 'id', ARGV[2])
  redis.call('XADD', KEYS[8], 'MAXLEN', '~', '1000', '*', 'to', ARGV[1])
end
return 1
`);

/**
 * KEYS: mail, read, lease, cursor, moved. ARGV: lease ms, token, holder, and a stream id or ''. Leases the oldest
 * entry that is neither read nor under a live lease, or, given a stream id, that entry if it is one of those.
 * Returns {stream id, record, skipped} or {'', '', skipped} (see WALK for skipped).
 */
export const CLAIM = new Script(`${notMoved(5)}${WALK}${FIELD}${UNLOGGED}
local target = ARGV[4]
local taken = nil
walk(function(entry)
  if target ~= '' and entry[1] ~= target then return false end
  redis.call('HSET', KEYS[3], entry[1], string.format('%.0f', now + tonumber(ARGV[1])) .. '|' .. ARGV[2] .. '|' .. ARGV[3])
  taken = entry
  return true
end)
if taken then return {taken[1], field(taken[2], 'record'), skipped} end
return {'', '', skipped}
`);

/**
 * KEYS: mail, read, lease, cursor. ARGV: how many. The oldest takeable entries (neither read nor under a live
 * lease), at most that many: {{stream id, record}, ...}, skipped} (see WALK). What a take with a preference looks
 * at before it claims the one it chose.
 */
export const PEEK = new Script(`${WALK}${FIELD}${UNLOGGED}
local limit = tonumber(ARGV[1])
local found = {}
walk(function(entry)
  found[#found + 1] = {entry[1], field(entry[2], 'record')}
  return #found >= limit
end)
return {found, skipped}
`);

/**
 * KEYS: mail, read, lease, unread, rbell. ARGV: stream id, token, read_at, mailbox. Marks a taken message read and
 * rings the receipt bell. Returns 1, or 0 when it already was (marked by hand, or taken over after the lease ran out
 * and acknowledged first) or is no longer live (archived meanwhile).
 */
export const ACKNOWLEDGE = durable(`${LEASE}
local lease = redis.call('HGET', KEYS[3], ARGV[1])
local mine = lease and select(2, lease_parts(lease)) == ARGV[2]
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 or #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1]) == 0 then
  if mine then redis.call('HDEL', KEYS[3], ARGV[1]) end
  return 0
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HINCRBY', KEYS[4], ARGV[4], -1)
redis.call('XADD', KEYS[5], 'MAXLEN', '1', '*', 'id', ARGV[1])
return 1
`);

/**
 * KEYS: lease, bell, namespace bell. ARGV: mailbox, then pairs of stream id and token. Drops each lease that still
 * carries that token (a message whose showing failed, or whose holder is known dead) and rings the bells, since the
 * message can be taken again. Returns how many were dropped.
 */
export const DROP_LEASES = new Script(`${LEASE}${UNLOGGED}
local dropped = 0
for i = 2, #ARGV, 2 do
  local lease = redis.call('HGET', KEYS[1], ARGV[i])
  if lease and select(2, lease_parts(lease)) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    dropped = dropped + 1
  end
end
if dropped > 0 then
  redis.call('XADD', KEYS[2], 'MAXLEN', '1', '*', 'id', '')
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', '1000', '*', 'to', ARGV[1])
end
return dropped
`);

/**
 * KEYS: ids, read, lease, unread, mail, rbell. ARGV: message id, read_at, mailbox, and a move count or ''. Marks an
 * unread live message read (a lease on it is dropped: its holder's acknowledgement then finds it read), with a count
 * only if its record was moved that many times, and rings the receipt bell. Returns read_at, or '' when it was read
 * already, is not live, or was moved another number of times.
 */
export const MARK_READ = durable(`${FIELD}${MOVES}
local sid = redis.call('HGET', KEYS[1], ARGV[1])
if not sid or redis.call('HEXISTS', KEYS[2], sid) == 1 then return '' end
if ARGV[4] ~= '' then
  local entry = redis.call('XRANGE', KEYS[5], sid, sid)[1]
  if not entry or moves_of(field(entry[2], 'record')) ~= tonumber(ARGV[4]) then return '' end
end
redis.call('HSET', KEYS[2], sid, ARGV[2])
redis.call('HDEL', KEYS[3], sid)
redis.call('HINCRBY', KEYS[4], ARGV[3], -1)
redis.call('XADD', KEYS[6], 'MAXLEN', '1', '*', 'id', ARGV[1])
return ARGV[2]
`);

/**
 * KEYS: mail, read, cursor. ARGV: the stream id to go on after ('' to start at the cursor), how many entries to look
 * at. One page of the unread live entries, oldest first: {last stream id looked at ('' when none was left), {{stream
 * id, record}, ...}}. A page at a time, so that no call holds the server for long, however long the read history.
 */
export const UNREAD = new Script(`${FIELD}
local from = '(' .. (ARGV[1] ~= '' and ARGV[1] or (redis.call('GET', KEYS[3]) or '0-0'))
local batch = redis.call('XRANGE', KEYS[1], from, '+', 'COUNT', tonumber(ARGV[2]))
local found = {}
for _, entry in ipairs(batch) do
  if redis.call('HEXISTS', KEYS[2], entry[1]) == 0 then found[#found + 1] = {entry[1], field(entry[2], 'record')} end
end
return {#batch > 0 and batch[#batch][1] or '', found}
`);

/** KEYS: a hash. ARGV: fields. Their values, in order, '' for a field that is not there (HMGET, which a user's ACL may not allow). */
export const FIELDS = new Script(`
local out = {}
for i = 1, #ARGV do out[i] = redis.call('HGET', KEYS[1], ARGV[i]) or '' end
return out
`);

/**
 * Looks up message ids, each in its own mailbox, live first then archived. KEYS: five per mailbox (ids, mail, read,
 * archids, arch). ARGV: pairs of the mailbox's position (1-based, in fives) and message id. Returns per pair
 * {'live' or 'archived', record, read_at ('' when unread)}, or {''} when it is in neither.
 */
export const LOOK_UP = new Script(`${FIELD}
local out = {}
for i = 1, #ARGV, 2 do
  local base = (tonumber(ARGV[i]) - 1) * 5
  local id = ARGV[i + 1]
  local result = {''}
  local sid = redis.call('HGET', KEYS[base + 1], id)
  local entry = sid and redis.call('XRANGE', KEYS[base + 2], sid, sid)[1]
  if entry then
    result = {'live', field(entry[2], 'record'), redis.call('HGET', KEYS[base + 3], sid) or ''}
  else
    sid = redis.call('HGET', KEYS[base + 4], id)
    entry = sid and redis.call('XRANGE', KEYS[base + 5], sid, sid)[1]
    if entry then result = {'archived', field(entry[2], 'record'), field(entry[2], 'read_at')} end
  end
  out[#out + 1] = result
end
return out
`);

/**
 * KEYS: mail, read, ids. ARGV: the stream id to start after ('-' for the start), how many. A page of the mailbox,
 * oldest first: {{stream id, record, read_at ('' when unread), older}, ...}, `older` '1' for an older copy of a
 * message (ids names a later entry of its id: a copy `agentmail name` moved came back), else ''. What archive reads a
 * long mailbox by.
 */
export const PAGE = new Script(`${FIELD}
local from = ARGV[1] == '-' and '-' or '(' .. ARGV[1]
local page = {}
for _, entry in ipairs(redis.call('XRANGE', KEYS[1], from, '+', 'COUNT', tonumber(ARGV[2]))) do
  local newest = redis.call('HGET', KEYS[3], field(entry[2], 'id'))
  local older = (newest and newest ~= entry[1]) and '1' or ''
  page[#page + 1] = {entry[1], field(entry[2], 'record'), redis.call('HGET', KEYS[2], entry[1]) or '', older}
end
return page
`);

/**
 * KEYS: mail, read, ids, lease, cursor, unread, arch, archids, archived. ARGV: mailbox, '1' when every message given
 * must be found (a selection by id), then pairs of stream id and message id. Moves those live entries, with their
 * read state, to the archive; a mailbox left with no entry is removed. With '1', a message neither live nor archived
 * moves nothing and is returned: {-1, id}. Returns {moved, removed (1 or 0)}.
 */
export const ARCHIVE = durable(`${FIELD}
local function live(i) return redis.call('XRANGE', KEYS[1], ARGV[i], ARGV[i])[1] end
if ARGV[2] == '1' then
  for i = 3, #ARGV, 2 do
    if not live(i) and redis.call('HEXISTS', KEYS[8], ARGV[i + 1]) == 0 then return {-1, ARGV[i + 1]} end
  end
end
local existed = redis.call('EXISTS', KEYS[1]) == 1
local moved = 0
for i = 3, #ARGV, 2 do
  local sid, id = ARGV[i], ARGV[i + 1]
  local entry = live(i)
  if entry then
    local read_at = redis.call('HGET', KEYS[2], sid) or ''
    local archived = redis.call('XADD', KEYS[7], '*', 'id', id, 'record', field(entry[2], 'record'), 'read_at', read_at)
    redis.call('HSET', KEYS[8], id, archived)
    redis.call('XDEL', KEYS[1], sid)
    redis.call('HDEL', KEYS[2], sid)
    redis.call('HDEL', KEYS[4], sid)
    if redis.call('HGET', KEYS[3], id) == sid then redis.call('HDEL', KEYS[3], id) end
    if read_at == '' then redis.call('HINCRBY', KEYS[6], ARGV[1], -1) end
    moved = moved + 1
  end
end
if moved > 0 then redis.call('SADD', KEYS[9], ARGV[1]) end
if existed and redis.call('XLEN', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
  redis.call('HDEL', KEYS[6], ARGV[1])
  return {moved, 1}
end
return {moved, 0}
`);

/**
 * KEYS: arch, archids, archived. ARGV: mailbox, then pairs of stream id and message id. Deletes those archived
 * entries; an archive left empty is removed. Returns how many were deleted.
 */
export const PURGE = durable(`
local purged = 0
for i = 2, #ARGV, 2 do
  purged = purged + redis.call('XDEL', KEYS[1], ARGV[i])
  if redis.call('HGET', KEYS[2], ARGV[i + 1]) == ARGV[i] then redis.call('HDEL', KEYS[2], ARGV[i + 1]) end
end
if redis.call('XLEN', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('SREM', KEYS[3], ARGV[1])
end
return purged
`);

/**
 * KEYS: the lists key, the lists bell. ARGV: the JSON the caller read ('' for none), the JSON to store ('' for
 * none). Stores it only if the lists are still what the caller read, and rings the bell when they change. Returns
 * {1} or {0, what is stored now}: the caller changes that and tries again.
 */
export const REPLACE_LISTS = durable(`
local current = redis.call('GET', KEYS[1]) or ''
if current ~= ARGV[1] then return {0, current} end
if ARGV[2] == current then return {1} end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2]) end
redis.call('XADD', KEYS[2], 'MAXLEN', '1', '*', 'changed', '1')
return {1}
`);

const DOCUMENT = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
local ok, decoded = false, nil
if old then ok, decoded = pcall(cjson.decode, old) end
local previous = (ok and type(decoded) == 'table') and decoded or nil
local doc = {}
if previous then for key, value in pairs(previous) do if type(value) == 'string' then doc[key] = value end end end
local PIN = {'window', 'server', 'pin_host', 'named_at'}
`;

/**
 * KEYS: agents. ARGV: name, status, pane, time (ISO 8601), this host, then window, server and pin host ('' for no
 * pin), then the tmux server the agent lives on and its machine ('' when not known). Records an agent's availability:
 * `since` kept while it is unchanged, a pin and where it lives kept while the same pane writes (status.ts). Returns
 * the document.
 */
export const WRITE_STATUS = new Script(`${NOW}${DOCUMENT}
local kept_pin = previous and previous.pane == ARGV[3] and doc.named_at
if ARGV[9] ~= '' then
  doc.tmux_server, doc.tmux_host = ARGV[9], ARGV[10]
elseif not (previous and previous.pane == ARGV[3]) then
  doc.tmux_server, doc.tmux_host = nil, nil
end
doc.name = ARGV[1]
if doc.since == nil or doc.status ~= ARGV[2] then doc.since = ARGV[4] end
doc.status = ARGV[2]
doc.updated_at = ARGV[4]
doc.pane = ARGV[3]
doc.host = doc.host or ARGV[5]
doc.last_seen_ms = doc.last_seen_ms or string.format('%.0f', now)
if ARGV[6] ~= '' then
  doc.window, doc.server, doc.pin_host, doc.named_at = ARGV[6], ARGV[7], ARGV[8], ARGV[4]
elseif not kept_pin then
  for _, key in ipairs(PIN) do doc[key] = nil end
end
local encoded = cjson.encode(doc)
redis.call('HSET', KEYS[1], ARGV[1], encoded)
return encoded
`);

/**
 * KEYS: agents, moved. ARGV: name, host, pane, exclusive ms, time (ISO 8601), then the caller's tmux server and its
 * machine ('' outside tmux), and '1' to take the name over. Records that an agent ran a command on a host, and where
 * it lives. Refused when the name ran on another host less than `exclusive ms` ago, or, unless taken over, when it
 * lives on another tmux server (while not offline): {2, document} when that server is on the caller's machine (the
 * caller asks tmux whether its pane is alive), {0, document} when it is on another machine and ran a command less
 * than `exclusive ms` ago. An agent first seen here is ready; a pin is dropped when another pane runs under the
 * name. Returns {1, document} when recorded.
 */
export const TOUCH = new Script(`${notMoved(2)}${NOW}${DOCUMENT}
local exclusive = tonumber(ARGV[4])
local recent = exclusive > 0 and now - (tonumber(doc.last_seen_ms) or 0) < exclusive
if doc.host and doc.host ~= ARGV[2] and recent then
  return {0, old}
end
local elsewhere = doc.tmux_server and (doc.tmux_server ~= ARGV[6] or doc.tmux_host ~= ARGV[7])
if ARGV[6] ~= '' and ARGV[8] ~= '1' and elsewhere and doc.status ~= 'offline' then
  if doc.tmux_host == ARGV[7] then return {2, old} end
  if recent then return {0, old} end
end
doc.name = ARGV[1]
doc.host = ARGV[2]
doc.last_seen_ms = string.format('%.0f', now)
if doc.pane ~= ARGV[3] then
  for _, key in ipairs(PIN) do doc[key] = nil end
  doc.pane = ARGV[3]
end
if ARGV[6] ~= '' then doc.tmux_server, doc.tmux_host = ARGV[6], ARGV[7] end
if doc.status == nil then
  doc.status, doc.since, doc.updated_at = 'ready', ARGV[5], ARGV[5]
end
local encoded = cjson.encode(doc)
redis.call('HSET', KEYS[1], ARGV[1], encoded)
return {1, encoded}
`);

/** KEYS: lease hashes. How many of their leases have not run out: what a migrate waits for to reach zero. */
export const LIVE_LEASES = new Script(`${NOW}${LEASE}
local live = 0
for _, key in ipairs(KEYS) do
  for _, lease in ipairs(redis.call('HVALS', key)) do
    if lease_parts(lease) > now then live = live + 1 end
  end
end
return live
`);

/** KEYS: claims. The claims document ('' for none) and the server's time in ms: {document, now}. */
export const READ_CLAIMS = new Script(`${NOW}
return {redis.call('GET', KEYS[1]) or '', string.format('%.0f', now)}
`);

/**
 * KEYS: claims. ARGV: the document the caller read ('' for none), the document to store ('' for none). Stores it only
 * if the claims are still what the caller read, so a decision taken on them holds. Returns {1} or {0, the document
 * stored now, the server's time in ms}: the caller decides again on that.
 */
export const REPLACE_CLAIMS = durable(`${NOW}
local current = redis.call('GET', KEYS[1]) or ''
if current ~= ARGV[1] then return {0, current, string.format('%.0f', now)} end
if ARGV[2] == current then return {1} end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2]) end
return {1}
`);

/** Drops from the announced set (KEYS[announced]) the ids whose message was read or left (KEYS[ids], KEYS[read]). */
const pruneAnnounced = (announced: number, ids: number, read: number) => `
for _, id in ipairs(redis.call('HKEYS', KEYS[${announced}])) do
  local sid = redis.call('HGET', KEYS[${ids}], id)
  if not sid or redis.call('HEXISTS', KEYS[${read}], sid) == 1 then redis.call('HDEL', KEYS[${announced}], id) end
end
`;

/**
 * KEYS: delivery, announced, ids, read, rbell. ARGV: triples of message id, the event's JSON, and its effect on the
 * announced set ('+', '-' or '='). Appends each event; an id stays in the announced set only while its message is
 * live and unread (the others leave the set). Rings the receipt bell.
 */
export const RECORD_DELIVERY = new Script(`${pruneAnnounced(2, 3, 4)}
for i = 1, #ARGV, 3 do
  local id = ARGV[i]
  redis.call('XADD', KEYS[1], '*', 'event', ARGV[i + 1])
  local sid = redis.call('HGET', KEYS[3], id)
  if ARGV[i + 2] == '-' or not sid or redis.call('HEXISTS', KEYS[4], sid) == 1 then
    redis.call('HDEL', KEYS[2], id)
  elseif ARGV[i + 2] == '+' then
    redis.call('HSET', KEYS[2], id, '1')
  end
end
redis.call('XADD', KEYS[5], 'MAXLEN', '1', '*', 'id', '')
return 1
`);

/**
 * KEYS: ids, read, lease, announced, delivery, rbell. ARGV: pairs of message id and the event's JSON (an event that
 * announces). Records each event whose message is live, unread, not under a live lease (a receiver showing it) and
 * not announced, and adds it to the announced set; first drops the ids of messages read since. Rings the receipt
 * bell when it recorded any. Returns the ids recorded.
 */
export const ANNOUNCE = new Script(`${NOW}${LEASE}${pruneAnnounced(4, 1, 2)}
local claimed = {}
for i = 1, #ARGV, 2 do
  local id = ARGV[i]
  local sid = redis.call('HGET', KEYS[1], id)
  if sid and redis.call('HEXISTS', KEYS[2], sid) == 0 and redis.call('HEXISTS', KEYS[4], id) == 0 then
    local lease = redis.call('HGET', KEYS[3], sid)
    if not (lease and lease_parts(lease) > now) then
      redis.call('XADD', KEYS[5], '*', 'event', ARGV[i + 1])
      redis.call('HSET', KEYS[4], id, '1')
      claimed[#claimed + 1] = id
    end
  end
end
if #claimed > 0 then redis.call('XADD', KEYS[6], 'MAXLEN', '1', '*', 'id', '') end
return claimed
`);

/**
 * The feed's look (feed.ts). KEYS: three per mailbox (mail, read, arch). ARGV, per mailbox in that order: '1' to read it whole or '0', the
 * last stream id read, the known lengths of mail, read and arch, how many unread stream ids follow, and those ids.
 * Returns per mailbox {'whole', entries, {}, archive entries, lengths} or {'more', entries added, read times of the
 * given ids ('' for unread), {}, lengths}, where each entry is {stream id, record, read_at ('' for unread)} (an
 * archive entry's read_at is its own field) and lengths are those of mail, read and arch now. Changes nothing.
 */
export const FEED_LOOK = new Script(`
local function field(fields, name)
  for i = 1, #fields, 2 do if fields[i] == name then return fields[i + 1] end end
  return ''
end
local function entries(key, from, read_key)
  local out = {}
  for _, entry in ipairs(redis.call('XRANGE', key, from, '+')) do
    local read_at = read_key and (redis.call('HGET', read_key, entry[1]) or '') or field(entry[2], 'read_at')
    out[#out + 1] = {entry[1], field(entry[2], 'record'), read_at}
  end
  return out
end
local out = {}
local at = 1
for i = 1, #KEYS, 3 do
  local mail, read, arch = KEYS[i], KEYS[i + 1], KEYS[i + 2]
  local whole, last = ARGV[at], ARGV[at + 1]
  local live_len, read_len, arch_len = tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3]), tonumber(ARGV[at + 4])
  local unread_count = tonumber(ARGV[at + 5])
  local unread = {}
  for j = 1, unread_count do unread[j] = ARGV[at + 5 + j] end
  at = at + 6 + unread_count
  local added = whole == '1' and {} or entries(mail, '(' .. last, read)
  local now_live, now_read, now_arch = redis.call('XLEN', mail), redis.call('HLEN', read), redis.call('XLEN', arch)
  if whole == '1' or now_arch ~= arch_len or now_live ~= live_len + #added or now_read < read_len then
    out[#out + 1] = {'whole', entries(mail, '-', read), {}, entries(arch, '-', nil), now_live, now_read, now_arch}
  else
    local times = {}
    if now_read ~= read_len then
      for j = 1, #unread do times[j] = redis.call('HGET', read, unread[j]) or '' end
    end
    out[#out + 1] = {'more', added, times, {}, now_live, now_read, now_arch}
  end
end
return out
`);
