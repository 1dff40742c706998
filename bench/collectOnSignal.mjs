// Loaded into a benchmarked daemon (`node --expose-gc --import bench/collectOnSignal.mjs …`): a full
// collection of its heap on SIGUSR2, so that a memory reading compares what the daemon keeps, not where
// its heap stood in its collection cycle (between two full collections the old space holds its garbage
// up to a limit several times what is alive: tens of MB either way at any given reading).
process.on('SIGUSR2', () => globalThis.gc?.());
