// The README's screenshots of the seller panel: every page at a phone's size (390×844) and a desk's
// (1280×900), as docs/screenshots/painel-<page>-<celular|mesa>.png. The browser test that visits
// them all writes them only when SCREENSHOTS=1, so `npm test` never touches the committed images.
import { spawnSync } from 'node:child_process';

const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', 'test/integration/panel-sizes.test.ts'], {
  stdio: 'inherit',
  env: { ...process.env, SCREENSHOTS: '1' },
});
process.exit(result.status ?? 1);
