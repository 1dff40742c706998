/** Planted bugs the simulator must find in worlds of one board and one lane (test/sim/plantedBugs.ts says how). */
import { describePlanted } from './plantedBugs.ts';

describePlanted('one lane');
