// A gateway (role api, no workers) and a bare Fastify route on the same machine, in one child
// process so the load generator in the parent does not share its event loop.
import Fastify from 'fastify';
import { loadConfig } from '../src/config.ts';
import { buildApp } from '../src/app.ts';
import { closeContext, createContext } from '../src/runtime.ts';

const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', PORT: '0' });
const ctx = await createContext(config);
const app = await buildApp(ctx);
const gateway = await app.listen({ port: 0, host: '127.0.0.1' });

const bare = Fastify({ logger: false });
bare.get('/constant', async () => ({ available: 0, blocked: 0, total: 0 }));
const bareAddress = await bare.listen({ port: 0, host: '127.0.0.1' });

process.send!({ gateway, bare: bareAddress, adminToken: config.adminToken });
process.on('message', async (m) => {
  if (m === 'stop') {
    await app.close();
    await bare.close();
    await closeContext(ctx);
    process.exit(0);
  }
});
