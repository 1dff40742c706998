/** A machine of the simulated world (a board's, a computer's): its current life, and whether one is starting. */
export interface Machine<Life> {
  readonly life: Life | null;
  /** A life is starting (its start may wait out a full disk): no second one starts beside it. */
  booting: boolean;
  /** How many lives it has begun. */
  readonly lives: number;
}

/** Starts a machine's next life with `boot`, unless one runs or is starting: then null. */
export async function startLife<Life>(machine: Machine<Life>, boot: () => Promise<Life>): Promise<Life | null> {
  if (machine.life || machine.booting) return null;
  machine.booting = true;
  const attempt = machine.lives + 1;
  try {
    return await boot();
  } finally {
    // A crash during the start ended this attempt already (and may have begun another).
    if (machine.lives === attempt) machine.booting = false;
  }
}
