// A gateway process with PAYOUT_PROVIDER=efi that runs one round of the payout job and prints
// "sending" first; the PSP the test owns takes the Pix and never answers, and the test kills this
// process there: the crash between "Efí has the Pix" and "the outcome is applied".
import { createContext, loadSettings } from '../../src/runtime.ts';

const ctx = await createContext(loadSettings(process.env));
const job = ctx.rails.jobs.find((j) => j.name === 'efi-payouts');
if (!job) throw new Error('no efi-payouts job');
console.log('sending');
await job.run(ctx);
console.log('finished');
