import { InvalidArgumentError } from 'commander';

/** A whole-number option of at least `min`, with an error that names the option. */
export function int(name: string, min: number) {
  return (text: string): number => {
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < min) throw new InvalidArgumentError(`${name} wants a whole number ≥ ${min}, not "${text}"`);
    return value;
  };
}
