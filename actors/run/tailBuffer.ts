/**
 * The last `maxBytes` of a stream, however much passes through it. An agent may print for hours; the
 * daemon keeps only what fits here (the stderr tail, the unfinished answer to salvage).
 */
export class TailBuffer {
  // A ring of exactly maxBytes: the stream's chunks are copied in, never kept, because a small chunk
  // read from a pipe can be a view of a much larger buffer and would pin all of it.
  private readonly ring: Buffer;
  private next = 0;
  private held = 0;
  private seen = 0;

  constructor(readonly maxBytes: number) {
    if (!Number.isInteger(maxBytes) || maxBytes <= 0) throw new RangeError(`a tail buffer needs a positive size, got ${maxBytes}`);
    this.ring = Buffer.alloc(maxBytes);
  }

  push(chunk: Uint8Array | string): void {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    if (bytes.length === 0) return;
    this.seen += bytes.length;
    if (bytes.length >= this.maxBytes) bytes = bytes.subarray(bytes.length - this.maxBytes);
    const first = Math.min(bytes.length, this.maxBytes - this.next);
    this.ring.set(bytes.subarray(0, first), this.next);
    this.ring.set(bytes.subarray(first), 0);
    this.next = (this.next + bytes.length) % this.maxBytes;
    this.held = Math.min(this.maxBytes, this.held + bytes.length);
  }

  /** Bytes pushed in all, kept or not. */
  bytesSeen(): number {
    return this.seen;
  }

  /** Whether anything was dropped from the front. */
  cut(): boolean {
    return this.seen > this.held;
  }

  bytes(): Buffer {
    if (this.held < this.maxBytes) return Buffer.from(this.ring.subarray(0, this.held));
    return Buffer.concat([this.ring.subarray(this.next), this.ring.subarray(0, this.next)], this.maxBytes);
  }

  /**
   * The tail as text. A cut can land inside a multi-byte character (and the stream may still be in
   * the middle of writing one), so partial characters at either end are dropped, never turned into
   * replacement marks.
   */
  text(): string {
    return decodeWhole(this.bytes(), this.cut());
  }
}

/** UTF-8 text of `bytes`, leaving out a character split at the end (and, if `cutFront`, at the start). */
export function decodeWhole(bytes: Buffer, cutFront = false): string {
  let start = 0;
  if (cutFront) {
    while (start < bytes.length && start < 3 && isContinuation(bytes[start]!)) start++;
  }
  return bytes.subarray(start, completeEnd(bytes, start)).toString('utf8');
}

/** The largest `end <= maxBytes` that does not split a UTF-8 character of `bytes`. */
export function utf8Boundary(bytes: Uint8Array, maxBytes: number): number {
  if (maxBytes >= bytes.length) return bytes.length;
  let end = Math.max(0, maxBytes);
  // Step back over continuation bytes to the start of the character the cut falls in.
  while (end > 0 && end > maxBytes - 3 && isContinuation(bytes[end]!)) end--;
  return end;
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

/** Where the last whole character ends: an incomplete trailing sequence is left out. */
function completeEnd(bytes: Uint8Array, start: number): number {
  const length = bytes.length;
  // Find the lead byte of the last character (at most 3 continuation bytes back).
  let lead = length - 1;
  while (lead >= start && lead > length - 4 && isContinuation(bytes[lead]!)) lead--;
  if (lead < start) return length;
  const byte = bytes[lead]!;
  const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
  return lead + needed > length ? lead : length;
}
