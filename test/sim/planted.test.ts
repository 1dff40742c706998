/** Planted bugs the simulator must find in small worlds of one board (test/sim/plantedBugs.ts says how). */
import { describePlanted } from './plantedBugs.ts';

describePlanted('small');
