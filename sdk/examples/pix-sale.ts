import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buffer } from 'node:stream/consumers';
import { OperatorClient, SellerClient, verifyWebhook } from '../src/index.ts';

const { GATEWAY_URL: baseUrl = 'http://127.0.0.1:3000', PUBLIC_KEY = '', PRIVATE_KEY = '', ADMIN_TOKEN = '', RECEIVER_PORT = '4000' } = process.env;
const seller = new SellerClient({ baseUrl, publicKey: PUBLIC_KEY, privateKey: PRIVATE_KEY });
const { secret } = await seller.getSigningSecret();

// The receiver: verifyWebhook throws unless the raw bytes and headers were signed with your secret.
const receiver = createServer(async (req, res) => {
  try {
    receiver.emit('verified', verifyWebhook(await buffer(req), req.headers, secret));
    res.end();
  } catch {
    res.writeHead(400).end();
  }
}).listen(Number(RECEIVER_PORT), '127.0.0.1');
await once(receiver, 'listening');
const verified = once(receiver, 'verified');
const webhook = await seller.createWebhook({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, types: ['TRANSACTION'] });

try {
  const { sale } = await seller.createSale({
    amount: 15000,
    paymentMethod: 'PIX',
    customer: { name: 'Maria Silva', email: 'maria@example.com' },
    items: [{ title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false }],
  });
  console.log('PIX copia e cola:', sale.payment.pix?.key);
  // Sandbox only: the operator pays it, as the payer's bank would.
  await new OperatorClient({ baseUrl, adminToken: ADMIN_TOKEN }).sandboxPaySale(sale.id);
  console.log('verified webhook:', (await verified)[0]);
} finally {
  // A webhook left pointing at this receiver, once it is gone, would only collect failed deliveries.
  await seller.deleteWebhook(webhook.id);
  receiver.closeAllConnections();
  receiver.close();
}
