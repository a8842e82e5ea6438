/** Flags shared by the commands that run a lab (`lab`, `up`, `status`, `rotate`, `down`), declared once. */
import { CLIENT_MODES, integer, oneOf, text } from '../config';
import { DEFAULT_LAB_NAME, LAB_NAME, MAX_SANDBOXES } from '../lab';
import { valueFlag } from './args';

export const labNameFlag = (fallback = DEFAULT_LAB_NAME) =>
  valueFlag(text(LAB_NAME, '1 to 8 lower-case letters or digits, starting with a letter').default(fallback));

export const labModeFlag = () => valueFlag(oneOf(CLIENT_MODES).optional());

export const sandboxCountFlag = (fallback: number) =>
  valueFlag(integer(1, MAX_SANDBOXES, `an integer from 1 to ${MAX_SANDBOXES}`).default(fallback));
