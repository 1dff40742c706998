/** Planted bugs the simulator must find in worlds of two boards on one log (test/sim/plantedBugs.ts says how). */
import { describePlanted } from './plantedBugs.ts';

describePlanted('two boards');
