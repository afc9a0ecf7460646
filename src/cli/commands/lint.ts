import { UserError } from '../../core/model';
import type { Command } from '../io';

// Placeholder until this command lands: says so plainly instead of pretending.
const cmd: Command = async () => {
  throw new UserError('the "lint" command is not available in this build yet');
};
export default cmd;
