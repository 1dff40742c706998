// The board page's view as the page holds it: the hello's first view, then each delta applied to it.
// The server makes the deltas (web/boardDelta.ts); this is their one reader. No DOM here: the tests
// apply deltas with it as the page does.

/** Each list of the view and the key that names an item of it in a delta. */
export const LISTS = {
  lanes: (lane) => lane.lane,
  claims: (claim) => claim.runId,
  sessions: (session) => `${session.computer}\n${session.lane}`,
  computers: (computer) => computer.id,
};

/**
 * The view after `delta`: its fields in `set` replaced; in each list, the items in `put` replaced or
 * added and those named in `drop` removed, in the order `order` gives (sent when it changed).
 */
export function applyDelta(view, delta) {
  const next = { ...view, at: delta.at, ...(delta.set ?? {}) };
  for (const [name, keyOf] of Object.entries(LISTS)) {
    const change = delta[name];
    if (!change) continue;
    const byKey = new Map(view[name].map((item) => [keyOf(item), item]));
    for (const key of change.drop ?? []) byKey.delete(key);
    for (const item of change.put ?? []) byKey.set(keyOf(item), item);
    const order = change.order ?? view[name].map(keyOf).filter((key) => byKey.has(key));
    next[name] = order.map((key) => byKey.get(key));
  }
  return next;
}
