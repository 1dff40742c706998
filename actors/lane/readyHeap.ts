/**
 * The lanes that may offer a candidate, as a binary min-heap of `[arrival of the lane's candidate,
 * lane]`. Picking the next run reads the smallest entries in order without scanning the queue, so a
 * scheduling decision costs about the same with 100 or 100,000 runs queued. Entries may go stale
 * (the lane got busy, its candidate changed): readers check each one against the queue and skip it,
 * and the fold drops stale entries as they reach the top.
 */
export type ReadyEntry = [arrival: number, lane: string];

export function pushReady(heap: ReadyEntry[], entry: ReadyEntry): void {
  heap.push(entry);
  siftUp(heap, less);
}

export function popReady(heap: ReadyEntry[]): ReadyEntry | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length === 0 || !last) return top;
  heap[0] = last;
  siftDown(heap, less);
  return top;
}

/**
 * The heap's entries in ascending order, read without changing it: a best-first walk of the heap's
 * tree with a small frontier heap of indices. Reading k entries costs O(k log k).
 */
export function* readyInOrder(heap: readonly ReadyEntry[]): Generator<ReadyEntry> {
  if (heap.length === 0) return;
  const frontier: number[] = [0];
  const before = (a: number, b: number) => less(heap[a]!, heap[b]!);
  while (frontier.length) {
    const i = frontier[0]!;
    const last = frontier.pop()!;
    if (frontier.length) {
      frontier[0] = last;
      siftDown(frontier, before);
    }
    yield heap[i]!;
    for (const child of [2 * i + 1, 2 * i + 2]) {
      if (child >= heap.length) continue;
      frontier.push(child);
      siftUp(frontier, before);
    }
  }
}

function less(a: ReadyEntry, b: ReadyEntry): boolean {
  return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
}

/** Moves the last element up to its place: `before(a, b)` says a belongs above b. */
function siftUp<T>(h: T[], before: (a: T, b: T) => boolean): void {
  let i = h.length - 1;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!before(h[i]!, h[p]!)) break;
    [h[i], h[p]] = [h[p]!, h[i]!];
    i = p;
  }
}

/** Moves the first element down to its place. */
function siftDown<T>(h: T[], before: (a: T, b: T) => boolean): void {
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let s = i;
    if (l < h.length && before(h[l]!, h[s]!)) s = l;
    if (r < h.length && before(h[r]!, h[s]!)) s = r;
    if (s === i) return;
    [h[i], h[s]] = [h[s]!, h[i]!];
    i = s;
  }
}
