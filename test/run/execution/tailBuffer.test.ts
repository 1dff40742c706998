import { describe, expect, it } from 'vitest';
import { decodeWhole, TailBuffer, utf8Boundary } from '../../../actors/run/tailBuffer.ts';

describe('TailBuffer keeps only the last N bytes', () => {
  it('given less than N bytes, then it keeps them all and says nothing was cut', () => {
    const tail = new TailBuffer(16);
    tail.push('hello ');
    tail.push(Buffer.from('world'));
    expect(tail.text()).toBe('hello world');
    expect(tail.cut()).toBe(false);
    expect(tail.bytesSeen()).toBe(11);
  });

  it('given many small chunks, then it keeps the last N bytes in order', () => {
    const tail = new TailBuffer(10);
    for (let i = 0; i < 100; i++) tail.push(String(i % 10));
    expect(tail.text()).toBe('0123456789');
    expect(tail.cut()).toBe(true);
    expect(tail.bytesSeen()).toBe(100);
  });

  it('given one chunk larger than N, then only its end is kept', () => {
    const tail = new TailBuffer(8);
    tail.push('abc');
    tail.push('0123456789abcdefXYZ');
    expect(tail.text()).toBe('bcdefXYZ');
    expect(tail.bytes().length).toBe(8);
  });

  it('given a cut that lands inside a multi-byte character, then the partial character is dropped, not garbled', () => {
    const tail = new TailBuffer(7);
    // "é" is 2 bytes, "€" 3: the last 7 bytes of "aé€€" start inside "é".
    tail.push('aé€€');
    expect(tail.bytes().length).toBe(7);
    expect(tail.text()).toBe('€€');
    expect(tail.text()).not.toContain('\uFFFD');
  });

  it('given a stream stopped in the middle of a character, then the incomplete end is left out', () => {
    const tail = new TailBuffer(64);
    const euro = Buffer.from('€');
    tail.push(Buffer.concat([Buffer.from('price: 5'), euro.subarray(0, 2)]));
    expect(tail.text()).toBe('price: 5');
  });

  it('given a million pushes, then memory stays at N bytes', () => {
    const tail = new TailBuffer(1024);
    const chunk = Buffer.alloc(100, 'q');
    for (let i = 0; i < 1_000_000; i++) tail.push(chunk);
    expect(tail.bytes().length).toBe(1024);
    expect(tail.bytesSeen()).toBe(100_000_000);
  });

  it('refuses a size that is not a positive integer', () => {
    expect(() => new TailBuffer(0)).toThrow(RangeError);
  });
});

describe('UTF-8 boundaries', () => {
  it('finds the last character boundary at or before a byte count', () => {
    const bytes = Buffer.from('a€b');
    expect(utf8Boundary(bytes, 2)).toBe(1);
    expect(utf8Boundary(bytes, 4)).toBe(4);
    expect(utf8Boundary(bytes, 99)).toBe(5);
    expect(decodeWhole(bytes.subarray(2), true)).toBe('b');
  });
});
