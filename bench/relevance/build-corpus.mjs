#!/usr/bin/env node
// Writes bench/relevance/corpus.json: the tool calls an agent made while working on
// "shopwise", a plausible TypeScript web shop (auth, billing with Stripe, product search
// on Elasticsearch, Postgres migrations, tests, configs, a React front end). Each record
// is `{id, toolName, args, result}`; ids are stable slugs that queries.json refers to.
// The data is written by hand below; this script only expands the compact forms.
//   node bench/relevance/build-corpus.mjs

import { writeFileSync } from "node:fs";

const records = [];
const add = (id, toolName, args, result) => records.push({ id, toolName, args, result });
const lines = (...xs) => xs.join("\n");

// readFile ---------------------------------------------------------------------------
const read = (id, path, ...content) => add(id, "readFile", { path }, { path, content: lines(...content) });

read("read-auth-login", "src/auth/login.ts",
  'import { findUserByEmail } from "../db/repositories/users";',
  'import { verifyPassword } from "./password";',
  "export async function login(email: string, password: string) {",
  "  const user = await findUserByEmail(email.toLowerCase());",
  '  if (!user || !(await verifyPassword(password, user.passwordHash))) throw new AuthError("INVALID_CREDENTIALS");',
  "  return issueSession(user);",
  "}");
read("read-auth-session", "src/auth/session.ts",
  'import jwt, { TokenExpiredError } from "jsonwebtoken";',
  "export function verifySession(token: string): SessionClaims {",
  "  try {",
  "    return jwt.verify(token, env.JWT_SECRET, { algorithms: ['HS256'] }) as SessionClaims;",
  "  } catch (err) {",
  '    if (err instanceof TokenExpiredError) throw new AuthError("SESSION_EXPIRED", 401);',
  '    throw new AuthError("INVALID_SESSION", 401);',
  "  }",
  "}");
read("read-auth-jwt", "src/auth/jwt.ts",
  'export const ACCESS_TOKEN_TTL = "15m";',
  "export function signAccessToken(user: User) {",
  "  return jwt.sign({ sub: user.id, role: user.role }, env.JWT_SECRET, { expiresIn: ACCESS_TOKEN_TTL });",
  "}");
read("read-auth-refresh", "src/auth/refresh-token.ts",
  "export async function rotateRefreshToken(presented: string) {",
  "  const row = await db.refreshTokens.findByHash(sha256(presented));",
  "  if (!row || row.revokedAt) { await revokeFamily(row?.familyId); throw new AuthError('REFRESH_REUSED'); }",
  "  if (row.expiresAt < new Date()) throw new AuthError('REFRESH_EXPIRED');",
  "  ...");
read("read-auth-password", "src/auth/password.ts",
  "const BCRYPT_ROUNDS = 12;",
  "export const hashPassword = (plain: string) => bcrypt.hash(plain, BCRYPT_ROUNDS);",
  "export async function createResetToken(userId: string) { /* 32 random bytes, stored hashed, valid 1 h */ }");
read("read-auth-middleware", "src/auth/middleware.ts",
  "export function requireAuth(req, res, next) {",
  "  const header = req.headers.authorization ?? '';",
  "  if (!header.startsWith('Bearer ')) return res.status(401).json({ error: 'missing token' });",
  "  req.user = verifySession(header.slice(7));",
  "  next();",
  "}");
read("read-auth-oauth-google", "src/auth/oauth/google.ts",
  "export async function googleCallback(req, res) {",
  "  if (req.query.state !== req.session.oauthState) return res.status(400).send('state mismatch');",
  "  const { tokens } = await oauthClient.getToken(req.query.code);",
  "  ...");
read("read-auth-permissions", "src/auth/permissions.ts",
  "const ROLE_PERMISSIONS = { admin: ['*'], member: ['orders:read', 'orders:create'], billing: ['billing:manage'] };",
  "export const can = (user: User, permission: string) => ...");
read("read-auth-rate-limit", "src/auth/rate-limit.ts",
  "// 5 failed logins per 15 minutes per email+ip, counted in redis",
  "export async function recordFailedLogin(key: string) { const n = await redis.incr(`ratelimit:login:${key}`); ... }");
read("read-billing-stripe", "src/billing/stripe-client.ts",
  "export const stripe = new Stripe(env.STRIPE_SECRET_KEY, { apiVersion: '2024-06-20', maxNetworkRetries: 2 });");
read("read-billing-webhooks", "src/billing/webhooks.ts",
  "export async function stripeWebhook(req, res) {",
  "  const event = stripe.webhooks.constructEvent(req.rawBody, req.headers['stripe-signature'], env.STRIPE_WEBHOOK_SECRET);",
  "  switch (event.type) {",
  "    case 'invoice.payment_failed': await markPastDue(event.data.object); break;",
  "    case 'customer.subscription.updated': await syncSubscription(event.data.object); break;",
  "  }",
  "  res.sendStatus(200);",
  "}");
read("read-billing-subscriptions", "src/billing/subscriptions.ts",
  "export async function changePlan(subscriptionId: string, priceId: string) {",
  "  return stripe.subscriptions.update(subscriptionId, { items: [...], proration_behavior: 'create_prorations' });",
  "}",
  "export async function cancelAtPeriodEnd(subscriptionId: string) { ... }");
read("read-billing-invoices", "src/billing/invoices.ts",
  "export async function renderInvoicePdf(invoice: Invoice) { /* pdfkit; number INV-{year}-{seq} */ }");
read("read-billing-tax", "src/billing/tax.ts",
  "const VAT_RATES: Record<string, number> = { DE: 0.19, FR: 0.2, NL: 0.21, IE: 0.23 };",
  "export function vatRate(country: string, customer: Customer) {",
  "  if (customer.vatId && country !== HOME_COUNTRY) return 0; // reverse charge",
  "  return VAT_RATES[country] ?? 0;",
  "}");
read("read-billing-coupons", "src/billing/coupons.ts",
  "export function applyCoupon(order: Order, coupon: Coupon) {",
  "  if (coupon.expiresAt && coupon.expiresAt < new Date()) throw new BillingError('COUPON_EXPIRED');",
  "  ...");
read("read-billing-refunds", "src/billing/refunds.ts",
  "export async function refundOrder(orderId: string, amount?: number) { return stripe.refunds.create({ payment_intent, amount }); }");
read("read-billing-currency", "src/billing/currency.ts",
  "const ZERO_DECIMAL = new Set(['JPY', 'KRW']);",
  "export const toMinorUnits = (amount: number, currency: string) => ZERO_DECIMAL.has(currency) ? amount : Math.round(amount * 100);");
read("read-search-indexer", "src/search/indexer.ts",
  "export async function indexProducts(products: Product[]) {",
  "  const body = products.flatMap((p) => [{ index: { _index: 'products', _id: p.id } }, toDocument(p)]);",
  "  const res = await es.bulk({ refresh: false, body });",
  "  if (res.errors) logger.warn({ failed: res.items.filter((i) => i.index?.error).length }, 'bulk index errors');",
  "}");
read("read-search-query", "src/search/query.ts",
  "export function buildQuery(q: string, filters: Filters) {",
  "  return { bool: { must: { multi_match: { query: q, fields: ['name^3', 'brand^2', 'description'], fuzziness: 'AUTO' } }, filter: toFilters(filters) } };",
  "}");
read("read-search-ranking", "src/search/ranking.ts",
  "// function_score: popularity (log1p of sales_30d) and a gauss decay on created_at",
  "export const rankingFunctions = [ { field_value_factor: { field: 'sales_30d', modifier: 'log1p' } }, ... ];");
read("read-search-autocomplete", "src/search/autocomplete.ts",
  "export async function suggest(prefix: string) { return es.search({ index: 'products', suggest: { name: { prefix, completion: { field: 'name_suggest', size: 8 } } } }); }");
read("read-search-synonyms", "config/search/synonyms.txt",
  "tee, t-shirt, tshirt", "sneakers, trainers, running shoes", "hoodie, sweatshirt");
read("read-search-client", "src/search/elastic-client.ts",
  "export const es = new Client({ node: env.ELASTICSEARCH_URL, requestTimeout: 3000, maxRetries: 1 });");
read("read-db-pool", "src/db/pool.ts",
  "export const pool = new Pool({ connectionString: env.DATABASE_URL, max: 20, idleTimeoutMillis: 30_000,",
  "  statement_timeout: 5_000 });",
  "export async function withTransaction<T>(fn: (c: PoolClient) => Promise<T>) { ... }");
read("read-mig-001", "db/migrations/001_create_users.sql",
  "CREATE TABLE users (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), email citext UNIQUE NOT NULL,",
  "  password_hash text NOT NULL, role text NOT NULL DEFAULT 'member', created_at timestamptz NOT NULL DEFAULT now());");
read("read-mig-002", "db/migrations/002_create_sessions.sql",
  "CREATE TABLE sessions (id uuid PRIMARY KEY, user_id uuid REFERENCES users(id) ON DELETE CASCADE, expires_at timestamptz NOT NULL);");
read("read-mig-003", "db/migrations/003_billing_tables.sql",
  "CREATE TABLE subscriptions (id text PRIMARY KEY, user_id uuid NOT NULL REFERENCES users(id), status text NOT NULL, current_period_end timestamptz);",
  "CREATE TABLE invoices (id text PRIMARY KEY, subscription_id text REFERENCES subscriptions(id), amount_due integer NOT NULL, status text NOT NULL);");
read("read-mig-004", "db/migrations/004_products_search_vector.sql",
  "ALTER TABLE products ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (to_tsvector('english', name || ' ' || description)) STORED;",
  "CREATE INDEX products_search_idx ON products USING gin (search_vector);");
read("read-mig-005", "db/migrations/005_refresh_tokens.sql",
  "CREATE TABLE refresh_tokens (token_hash text PRIMARY KEY, family_id uuid NOT NULL, user_id uuid NOT NULL, expires_at timestamptz NOT NULL, revoked_at timestamptz);");
read("read-mig-006", "db/migrations/006_orders_currency.sql",
  "ALTER TABLE orders ADD COLUMN currency char(3) NOT NULL;",
  "-- TODO backfill existing rows before making it NOT NULL");
read("read-db-migrate-script", "scripts/migrate.ts",
  "await client.query('SELECT pg_advisory_lock(4242)');",
  "for (const file of pending) { await client.query(readFileSync(file, 'utf8')); await client.query('INSERT INTO schema_migrations ...'); }");
read("read-db-orders-repo", "src/db/repositories/orders.ts",
  "export async function createOrder(input: NewOrder) {",
  "  return pool.query('INSERT INTO orders (user_id, total_cents, currency, status) VALUES ($1, $2, $3, $4) RETURNING *', [...]);",
  "}");
read("read-db-users-repo", "src/db/repositories/users.ts",
  "export const findUserByEmail = (email: string) => pool.query('SELECT * FROM users WHERE email = $1', [email]).then((r) => r.rows[0]);");
read("read-server", "src/server.ts",
  "const app = express();",
  "app.use(helmet()); app.use(cors({ origin: env.WEB_ORIGIN, credentials: true }));",
  "app.use('/api/auth', authRoutes); app.use('/api/billing', billingRoutes); app.use('/api/search', searchRoutes);",
  "app.use(errorHandler);");
read("read-api-users", "src/api/routes/users.ts",
  "router.get('/me', requireAuth, async (req, res) => res.json(await getUser(req.user.sub)));");
read("read-api-orders", "src/api/routes/orders.ts",
  "router.post('/', requireAuth, validate(NewOrderSchema), async (req, res) => res.status(201).json(await createOrder(req.body)));");
read("read-api-checkout", "src/api/routes/checkout.ts",
  "router.post('/session', requireAuth, async (req, res) => {",
  "  const session = await stripe.checkout.sessions.create({ mode: 'payment', line_items: toLineItems(req.body.cart), success_url, cancel_url });",
  "  res.json({ url: session.url });",
  "});");
read("read-api-products", "src/api/routes/products.ts",
  "router.get('/', async (req, res) => res.json(await searchProducts(req.query.q ?? '', parseFilters(req.query))));");
read("read-api-health", "src/api/routes/health.ts",
  "router.get('/healthz', (_req, res) => res.send('ok'));",
  "router.get('/readyz', async (_req, res) => { await pool.query('SELECT 1'); await es.ping(); res.send('ready'); });");
read("read-api-error-handler", "src/api/error-handler.ts",
  "export function errorHandler(err, req, res, _next) {",
  "  const status = err instanceof AppError ? err.status : 500;",
  "  logger.error({ err, path: req.path }, 'request failed');",
  "  res.status(status).json({ error: err.code ?? 'INTERNAL' });",
  "}");
read("read-email-mailer", "src/email/mailer.ts",
  "export const transport = nodemailer.createTransport({ host: env.SMTP_HOST, port: 587, auth: { user: env.SMTP_USER, pass: env.SMTP_PASS } });");
read("read-email-reset-template", "src/email/templates/reset-password.html",
  "<p>Hi {{name}},</p><p>Someone asked to reset your password. <a href=\"{{resetUrl}}\">Choose a new one</a> (valid for 1 hour).</p>");
read("read-cache-redis", "src/cache/redis.ts",
  "export const redis = new Redis(env.REDIS_URL, { maxRetriesPerRequest: 2, enableOfflineQueue: false });");
read("read-jobs-queue", "src/jobs/queue.ts",
  "export const jobs = new Queue('shopwise', { connection: redis, defaultJobOptions: { attempts: 5, backoff: { type: 'exponential', delay: 10_000 } } });");
read("read-jobs-dunning", "src/jobs/dunning.ts",
  "// retries failed subscription payments on day 1, 3 and 7, then cancels",
  "export async function runDunning(invoiceId: string) { ... }");
read("read-jobs-reindex", "src/jobs/reindex-products.ts",
  "export async function reindexAll() { for await (const batch of productBatches(500)) await indexProducts(batch); }");
read("read-lib-logger", "src/lib/logger.ts",
  "export const logger = pino({ level: env.LOG_LEVEL ?? 'info', redact: ['req.headers.authorization', 'password'] });");
read("read-web-loginform", "web/src/components/LoginForm.tsx",
  "export function LoginForm() {",
  "  const [error, setError] = useState<string | null>(null);",
  "  async function onSubmit(values) { try { await api.post('/auth/login', values); navigate('/'); } catch (e) { setError(messageFor(e.code)); } }",
  "  ...");
read("read-web-checkout-page", "web/src/pages/CheckoutPage.tsx",
  "export default function CheckoutPage() { const { cart } = useCart(); const pay = async () => { const { url } = await api.post('/checkout/session', { cart }); location.href = url; }; ... }");
read("read-web-searchbar", "web/src/components/SearchBar.tsx",
  "const debounced = useDebounce(query, 200);",
  "useEffect(() => { if (debounced.length > 1) api.get(`/search/suggest?q=${encodeURIComponent(debounced)}`).then(setSuggestions); }, [debounced]);");
read("read-web-api-client", "web/src/lib/api-client.ts",
  "async function request(path, init) {",
  "  let res = await fetch(`/api${path}`, { ...init, credentials: 'include' });",
  "  if (res.status === 401 && !init.retried) { await fetch('/api/auth/refresh', { method: 'POST', credentials: 'include' }); return request(path, { ...init, retried: true }); }",
  "  ...");
read("read-test-login", "tests/auth/login.test.ts",
  "it('rejects a wrong password', async () => { await expect(login('a@b.c', 'nope')).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' }); });",
  "it('locks out after 5 failures', async () => { ... });");
read("read-test-session", "tests/auth/session.test.ts",
  "it('rejects an expired token', () => {",
  "  jest.useFakeTimers().setSystemTime(new Date('2026-01-01T00:00:00Z'));",
  "  const token = signAccessToken(user);",
  "  jest.advanceTimersByTime(16 * 60 * 1000);",
  "  expect(() => verifySession(token)).toThrow('SESSION_EXPIRED');",
  "});");
read("read-test-webhooks", "tests/billing/webhooks.test.ts",
  "it('marks the subscription past_due on invoice.payment_failed', async () => {",
  "  const payload = fixture('invoice.payment_failed'); const sig = stripe.webhooks.generateTestHeaderString({ payload, secret });",
  "  ...");
read("read-test-tax", "tests/billing/tax.test.ts",
  "it.each([['DE', 0.19], ['FR', 0.2]])('charges VAT in %s', (country, rate) => expect(vatRate(country, consumer)).toBe(rate));",
  "it('applies the reverse charge to EU businesses', () => expect(vatRate('FR', { vatId: 'FR123' })).toBe(0));");
read("read-test-search-query", "tests/search/query.test.ts",
  "it('boosts the product name over the description', () => { expect(buildQuery('shoe', {}).bool.must.multi_match.fields[0]).toBe('name^3'); });");
read("read-test-migrations", "tests/db/migrations.test.ts",
  "it('applies every migration to an empty database and back', async () => { const pg = await new PostgreSqlContainer().start(); ... });");
read("read-test-checkout-e2e", "e2e/checkout.spec.ts",
  "test('pays with a test card', async ({ page }) => { await page.goto('/cart'); await page.getByRole('button', { name: 'Checkout' }).click(); await fillStripeCard(page, '4242 4242 4242 4242'); ... });");
read("read-test-setup", "tests/setup.ts",
  "beforeAll(async () => { process.env.DATABASE_URL = (await startPostgres()).url; await migrate(); });");
read("read-package-json", "package.json",
  '{ "name": "shopwise", "scripts": { "dev": "tsx watch src/server.ts", "test": "jest", "migrate": "tsx scripts/migrate.ts", "lint": "eslint src" },',
  '  "dependencies": { "express": "^4.19.2", "jsonwebtoken": "^9.0.2", "stripe": "^16.2.0", "@elastic/elasticsearch": "^8.14.0", "pg": "^8.12.0", "bullmq": "^5.8.0" } }');
read("read-tsconfig", "tsconfig.json",
  '{ "compilerOptions": { "target": "ES2022", "module": "NodeNext", "strict": true, "outDir": "dist" }, "include": ["src"] }');
read("read-env-example", ".env.example",
  "DATABASE_URL=postgres://shopwise:shopwise@localhost:5432/shopwise", "JWT_SECRET=change-me", "STRIPE_SECRET_KEY=sk_test_...",
  "STRIPE_WEBHOOK_SECRET=whsec_...", "ELASTICSEARCH_URL=http://localhost:9200", "REDIS_URL=redis://localhost:6379", "SMTP_HOST=localhost");
read("read-docker-compose", "docker-compose.yml",
  "services:", "  api: { build: ., ports: ['3000:3000'], depends_on: [postgres, redis, elasticsearch] }",
  "  postgres: { image: postgres:16 }", "  redis: { image: redis:7 }", "  elasticsearch: { image: elasticsearch:8.14.1, environment: [discovery.type=single-node] }");
read("read-ci", ".github/workflows/ci.yml",
  "jobs:", "  test:", "    services: { postgres: { image: postgres:16, ports: ['5432:5432'] } }",
  "    steps: [checkout, setup-node@v4 (node 20), npm ci, npm run lint, npm test]");
read("read-jest-config", "jest.config.ts",
  "export default { preset: 'ts-jest', testEnvironment: 'node', setupFilesAfterEach: ['<rootDir>/tests/setup.ts'], testTimeout: 20000 };");
read("read-dockerfile", "Dockerfile",
  "FROM node:20-alpine AS build", "RUN npm ci && npm run build", "FROM node:20-alpine", "USER node", "CMD [\"node\", \"dist/server.js\"]");
read("read-nginx", "deploy/nginx.conf",
  "location /api/ { proxy_pass http://api:3000; proxy_read_timeout 30s; client_max_body_size 2m; }");
read("read-config-index", "src/config/index.ts",
  "const Env = z.object({ DATABASE_URL: z.string().url(), JWT_SECRET: z.string().min(32), STRIPE_SECRET_KEY: z.string(), REDIS_URL: z.string() });",
  "export const env = Env.parse(process.env);");
read("read-eslint", ".eslintrc.cjs",
  "module.exports = { parser: '@typescript-eslint/parser', extends: ['eslint:recommended', 'plugin:@typescript-eslint/recommended'], rules: { 'no-console': 'error' } };");
read("read-readme", "README.md",
  "# shopwise", "Run `docker compose up -d`, `npm run migrate`, then `npm run dev`. Tests: `npm test` (needs Docker).");
read("read-changelog", "CHANGELOG.md",
  "## 1.8.0", "- Orders carry a currency (migration 006)", "- Refresh token rotation with reuse detection", "## 1.7.2", "- Search: synonyms for apparel");

// grep -------------------------------------------------------------------------------
const grep = (id, pattern, path, ...matches) =>
  add(id, "grep", { pattern, path }, { matches: matches.map(([file, line, text]) => ({ file, line, text })) });

grep("grep-tokenexpirederror", "TokenExpiredError", "src",
  ["src/auth/session.ts", 1, 'import jwt, { TokenExpiredError } from "jsonwebtoken";'],
  ["src/auth/session.ts", 6, "if (err instanceof TokenExpiredError) throw new AuthError(\"SESSION_EXPIRED\", 401);"]);
grep("grep-jwt-verify", "jwt.verify", "src",
  ["src/auth/session.ts", 4, "return jwt.verify(token, env.JWT_SECRET, { algorithms: ['HS256'] }) as SessionClaims;"]);
grep("grep-access-token-ttl", "ACCESS_TOKEN_TTL", ".",
  ["src/auth/jwt.ts", 1, 'export const ACCESS_TOKEN_TTL = "15m";'],
  ["src/auth/jwt.ts", 3, "{ expiresIn: ACCESS_TOKEN_TTL }"]);
grep("grep-authorization-header", "req.headers.authorization", "src",
  ["src/auth/middleware.ts", 2, "const header = req.headers.authorization ?? '';"],
  ["src/lib/logger.ts", 1, "redact: ['req.headers.authorization', 'password']"]);
grep("grep-stripe-webhook-secret", "STRIPE_WEBHOOK_SECRET", ".",
  [".env.example", 4, "STRIPE_WEBHOOK_SECRET=whsec_..."],
  ["src/billing/webhooks.ts", 2, "stripe.webhooks.constructEvent(req.rawBody, req.headers['stripe-signature'], env.STRIPE_WEBHOOK_SECRET)"]);
grep("grep-payment-failed", "invoice.payment_failed", "src",
  ["src/billing/webhooks.ts", 4, "case 'invoice.payment_failed': await markPastDue(event.data.object); break;"]);
grep("grep-proration", "proration_behavior", "src/billing",
  ["src/billing/subscriptions.ts", 2, "proration_behavior: 'create_prorations'"]);
grep("grep-vat-rate", "vatRate", "src",
  ["src/billing/tax.ts", 2, "export function vatRate(country: string, customer: Customer) {"],
  ["src/api/routes/checkout.ts", 14, "const tax = Math.round(subtotal * vatRate(country, customer));"]);
grep("grep-request-timeout", "requestTimeout", "src/search",
  ["src/search/elastic-client.ts", 1, "requestTimeout: 3000, maxRetries: 1"]);
grep("grep-fuzziness", "fuzziness", "src/search",
  ["src/search/query.ts", 2, "fuzziness: 'AUTO'"]);
grep("grep-pool-max", "max: 20", "src/db",
  ["src/db/pool.ts", 1, "export const pool = new Pool({ connectionString: env.DATABASE_URL, max: 20, idleTimeoutMillis: 30_000,"]);
grep("grep-statement-timeout", "statement_timeout", ".",
  ["src/db/pool.ts", 2, "statement_timeout: 5_000 });"]);
grep("grep-todo", "TODO", "src",
  ["src/billing/invoices.ts", 31, "// TODO: credit notes"], ["src/search/indexer.ts", 18, "// TODO: retry failed bulk items"]);
grep("grep-console-log", "console.log", "src",
  ["src/jobs/dunning.ts", 40, "console.log('dunning', invoiceId)"]);
grep("grep-currency-usd", "'USD'", "src",
  ["src/billing/currency.ts", 5, "export const DEFAULT_CURRENCY = 'USD';"], ["src/db/repositories/orders.ts", 3, "input.currency ?? 'USD'"]);
grep("grep-bcrypt-hash", "bcrypt.hash", "src/auth",
  ["src/auth/password.ts", 2, "bcrypt.hash(plain, BCRYPT_ROUNDS)"]);
grep("grep-redis-url", "REDIS_URL", ".",
  [".env.example", 6, "REDIS_URL=redis://localhost:6379"], ["src/cache/redis.ts", 1, "new Redis(env.REDIS_URL, ...)"]);
grep("grep-failed-login", "recordFailedLogin", "src/auth",
  ["src/auth/rate-limit.ts", 2, "export async function recordFailedLogin(key: string) {"],
  ["src/auth/login.ts", 5, "await recordFailedLogin(`${email}:${ip}`);"]);
grep("grep-cors-origin", "origin:", "src/server.ts",
  ["src/server.ts", 2, "app.use(cors({ origin: env.WEB_ORIGIN, credentials: true }));"]);
grep("grep-reset-token", "resetToken", "src",
  ["src/auth/password.ts", 3, "createResetToken(userId)"], ["src/email/mailer.ts", 22, "sendResetEmail(user, resetToken)"]);
grep("grep-any-type", ": any", "src",
  ["src/api/error-handler.ts", 1, "export function errorHandler(err: any, req, res, _next) {"]);
grep("grep-advisory-lock", "pg_advisory_lock", "scripts",
  ["scripts/migrate.ts", 12, "await client.query('SELECT pg_advisory_lock(4242)');"]);
grep("grep-samesite", "sameSite", "src",
  ["src/auth/cookies.ts", 4, "res.cookie('refresh', token, { httpOnly: true, secure: true, sameSite: 'strict', path: '/api/auth' });"]);
grep("grep-status-401", "status === 401", "web/src",
  ["web/src/lib/api-client.ts", 3, "if (res.status === 401 && !init.retried) {"]);
grep("grep-es-bulk", "es.bulk", "src",
  ["src/search/indexer.ts", 3, "const res = await es.bulk({ refresh: false, body });"]);

// searchCode ---------------------------------------------------------------------------
const search = (id, query, ...results) =>
  add(id, "searchCode", { query }, { results: results.map(([file, line, snippet]) => ({ file, line, snippet })) });

search("sc-login-handler", "login route handler",
  ["src/api/routes/auth.ts", 8, "router.post('/login', rateLimitLogin, async (req, res) => { const session = await login(req.body.email, req.body.password); ... })"]);
search("sc-refresh-rotation", "refresh token rotation reuse detection",
  ["src/auth/refresh-token.ts", 1, "export async function rotateRefreshToken(presented: string) {"]);
search("sc-webhook-signature", "verify stripe webhook signature",
  ["src/billing/webhooks.ts", 2, "stripe.webhooks.constructEvent(req.rawBody, req.headers['stripe-signature'], ...)"]);
search("sc-cancel-subscription", "cancel subscription at period end",
  ["src/billing/subscriptions.ts", 5, "export async function cancelAtPeriodEnd(subscriptionId: string) {"]);
search("sc-search-synonyms", "search synonyms analyzer",
  ["src/search/mappings.ts", 12, "filter: { apparel_synonyms: { type: 'synonym_graph', synonyms_path: 'analysis/synonyms.txt' } }"]);
search("sc-index-on-update", "index product on update",
  ["src/api/routes/products.ts", 30, "router.put('/:id', requireAdmin, async (req, res) => { const p = await updateProduct(...); await jobs.add('reindex', { id: p.id }); })"]);
search("sc-with-transaction", "withTransaction helper",
  ["src/db/pool.ts", 3, "export async function withTransaction<T>(fn: (c: PoolClient) => Promise<T>) {"]);
search("sc-send-reset-email", "send password reset email",
  ["src/email/mailer.ts", 20, "export async function sendResetEmail(user: User, token: string) {"]);
search("sc-format-price", "format price currency",
  ["web/src/lib/format.ts", 1, "export const formatPrice = (cents: number, currency: string) => new Intl.NumberFormat(locale, { style: 'currency', currency }).format(cents / 100);"]);
search("sc-order-total", "calculate order total discount",
  ["src/billing/totals.ts", 3, "export function orderTotal(items, coupon, vat) { const subtotal = sum(items); const discount = coupon ? ... }"]);
search("sc-permission-check", "role permission check admin",
  ["src/auth/permissions.ts", 2, "export const can = (user: User, permission: string) => ..."],
  ["src/api/routes/admin.ts", 4, "router.use(requireAuth, requirePermission('admin:*'))"]);
search("sc-cursor-pagination", "cursor pagination",
  ["src/db/paginate.ts", 1, "export async function paginate(query, { after, limit = 50 }) {"]);
search("sc-readiness-probe", "readiness probe database ping",
  ["src/api/routes/health.ts", 2, "router.get('/readyz', async (_req, res) => { await pool.query('SELECT 1'); ..."]);
search("sc-app-error", "class AppError extends Error",
  ["src/lib/errors.ts", 1, "export class AppError extends Error { constructor(public code: string, public status = 500) { super(code); } }"]);
search("sc-feature-flags", "feature flag isEnabled",
  ["src/lib/flags.ts", 3, "export const isEnabled = (flag: string, user?: User) => ..."]);

// listDirectory --------------------------------------------------------------------------
const ls = (id, path, ...entries) => add(id, "listDirectory", { path }, { entries });

ls("ls-root", ".", ".github/", "db/", "deploy/", "e2e/", "scripts/", "src/", "tests/", "web/", ".env.example", "Dockerfile", "docker-compose.yml", "package.json", "tsconfig.json");
ls("ls-src", "src", "api/", "auth/", "billing/", "cache/", "config/", "db/", "email/", "jobs/", "lib/", "search/", "server.ts");
ls("ls-src-auth", "src/auth", "oauth/", "cookies.ts", "jwt.ts", "login.ts", "middleware.ts", "password.ts", "permissions.ts", "rate-limit.ts", "refresh-token.ts", "session.ts");
ls("ls-src-billing", "src/billing", "coupons.ts", "currency.ts", "invoices.ts", "refunds.ts", "stripe-client.ts", "subscriptions.ts", "tax.ts", "totals.ts", "webhooks.ts");
ls("ls-src-search", "src/search", "autocomplete.ts", "elastic-client.ts", "indexer.ts", "mappings.ts", "query.ts", "ranking.ts");
ls("ls-migrations", "db/migrations", "001_create_users.sql", "002_create_sessions.sql", "003_billing_tables.sql", "004_products_search_vector.sql", "005_refresh_tokens.sql", "006_orders_currency.sql");
ls("ls-tests", "tests", "api/", "auth/", "billing/", "db/", "search/", "setup.ts");
ls("ls-tests-auth", "tests/auth", "login.test.ts", "oauth.test.ts", "refresh.test.ts", "session.test.ts");
ls("ls-api-routes", "src/api/routes", "admin.ts", "auth.ts", "checkout.ts", "health.ts", "orders.ts", "products.ts", "users.ts");
ls("ls-web-components", "web/src/components", "CartDrawer.tsx", "LoginForm.tsx", "PriceTag.tsx", "ProductCard.tsx", "SearchBar.tsx");
ls("ls-workflows", ".github/workflows", "ci.yml", "deploy.yml");
ls("ls-jobs", "src/jobs", "dunning.ts", "queue.ts", "reindex-products.ts", "send-invoices.ts");

// fetchPage ------------------------------------------------------------------------------
const fetchPage = (id, url, title, text) => add(id, "fetchPage", { url }, { url, status: 200, title, text });

fetchPage("fetch-jsonwebtoken-readme", "https://github.com/auth0/node-jsonwebtoken#readme", "auth0/node-jsonwebtoken",
  "TokenExpiredError: thrown if the token is expired. err.expiredAt holds the expiry date. clockTolerance: number of seconds to tolerate when checking nbf and exp claims, to deal with small clock differences among servers.");
fetchPage("fetch-stripe-webhook-signatures", "https://docs.stripe.com/webhooks/signature", "Check the webhook signatures",
  "Stripe signs the webhook events it sends to your endpoints by including a signature in each event's Stripe-Signature header. Use the raw request body: if the body was parsed and re-serialised, verification fails with 'No signatures found matching the expected signature for payload'.");
fetchPage("fetch-stripe-prorations", "https://docs.stripe.com/billing/subscriptions/prorations", "Prorations",
  "Changing a subscription's price creates prorations by default (proration_behavior=create_prorations). Use none to disable, always_invoice to bill immediately.");
fetchPage("fetch-stripe-testing", "https://docs.stripe.com/testing", "Testing",
  "Use 4242 4242 4242 4242 for a successful payment, 4000 0000 0000 0341 to attach a card that fails on charge, 4000 0025 0000 3155 to require 3D Secure authentication.");
fetchPage("fetch-elastic-multi-match", "https://www.elastic.co/guide/en/elasticsearch/reference/current/query-dsl-multi-match-query.html", "Multi-match query",
  "The multi_match query builds on the match query to allow multi-field queries. Individual fields can be boosted with the caret (^) notation. fuzziness is not allowed with the phrase or cross_fields types.");
fetchPage("fetch-elastic-synonym-graph", "https://www.elastic.co/guide/en/elasticsearch/reference/current/analysis-synonym-graph-tokenfilter.html", "Synonym graph token filter",
  "The synonym_graph token filter handles multi-word synonyms correctly during the analysis process; use it in search analyzers only. Updating the synonyms file requires reloading search analyzers.");
fetchPage("fetch-pg-alter-table", "https://www.postgresql.org/docs/16/sql-altertable.html", "PostgreSQL: ALTER TABLE",
  "ADD COLUMN ... NOT NULL fails when the table has rows unless a DEFAULT is given; a non-volatile default is stored in the catalog without rewriting the table.");
fetchPage("fetch-node-postgres-pool", "https://node-postgres.com/apis/pool", "node-postgres: Pool",
  "max: maximum number of clients the pool should contain (default 10). idleTimeoutMillis, connectionTimeoutMillis. Always release a checked-out client, or the pool is exhausted and queries wait forever.");
fetchPage("fetch-owasp-session", "https://cheatsheetseries.owasp.org/cheatsheets/Session_Management_Cheat_Sheet.html", "Session Management Cheat Sheet",
  "Idle and absolute session timeouts; renew the session ID after login; cookies with Secure, HttpOnly and SameSite attributes; invalidate the session on logout.");
fetchPage("fetch-express-error-handling", "https://expressjs.com/en/guide/error-handling.html", "Express error handling",
  "Define error-handling middleware with four arguments (err, req, res, next) after the other app.use() and routes calls. Errors thrown in async handlers must be passed to next() in Express 4.");
fetchPage("fetch-bullmq-retries", "https://docs.bullmq.io/guide/retrying-failing-jobs", "Retrying failing jobs",
  "Set attempts and backoff ({type: 'exponential', delay}) in the job options; a job that exhausts its attempts moves to the failed set.");
fetchPage("fetch-eu-vat-rates", "https://taxation-customs.ec.europa.eu/taxation-1/value-added-tax-vat/vat-rates_en", "VAT rates",
  "Standard VAT rates in EU member states: Germany 19%, France 20%, Netherlands 21%, Ireland 23%. B2B supplies to a business with a valid VAT number in another member state: reverse charge.");
fetchPage("fetch-jest-timer-mocks", "https://jestjs.io/docs/timer-mocks", "Timer Mocks",
  "jest.useFakeTimers() replaces setTimeout and Date; jest.setSystemTime(now) sets the current time; jest.advanceTimersByTime(ms) moves it forward.");
fetchPage("fetch-mdn-set-cookie", "https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/Set-Cookie", "Set-Cookie - HTTP | MDN",
  "SameSite=Strict means the browser sends the cookie only for same-site requests. Cookies with SameSite=None must also set the Secure attribute.");
fetchPage("fetch-gh-actions-postgres", "https://docs.github.com/en/actions/use-cases-and-examples/using-containerized-services/creating-postgresql-service-containers", "Creating PostgreSQL service containers",
  "Configure a postgres service container in your workflow with health checks (pg_isready) so that steps wait until the database accepts connections.");
fetchPage("fetch-redis-expire", "https://redis.io/docs/latest/commands/expire/", "EXPIRE | Redis",
  "Set a timeout on key. After the timeout has expired, the key will automatically be deleted. INCR does not reset the TTL of an existing key.");

// runCommand -----------------------------------------------------------------------------
const sh = (id, command, exitCode, stdout, stderr = "") => add(id, "runCommand", { command }, { exitCode, stdout, stderr });

sh("sh-test-auth", "npm test -- tests/auth", 1,
  lines("FAIL tests/auth/session.test.ts", "  ● session › rejects an expired token",
    "    Expected: \"SESSION_EXPIRED\"  Received: \"INVALID_SESSION\"", "Tests: 1 failed, 11 passed, 12 total"));
sh("sh-test-all", "npm test", 1,
  lines("PASS tests/billing/tax.test.ts", "FAIL tests/auth/session.test.ts", "FAIL tests/db/migrations.test.ts", "Tests: 2 failed, 86 passed, 88 total"));
sh("sh-test-webhooks", "npx jest tests/billing/webhooks.test.ts", 0,
  lines("PASS tests/billing/webhooks.test.ts", "  ✓ marks the subscription past_due on invoice.payment_failed (41 ms)", "Tests: 4 passed, 4 total"));
sh("sh-migrate", "npm run migrate", 1, "applying 006_orders_currency.sql",
  'error: column "currency" of relation "orders" contains null values');
sh("sh-migrate-status", "npm run migrate -- --status", 0,
  lines("001_create_users.sql      applied", "002_create_sessions.sql   applied", "003_billing_tables.sql    applied",
    "004_products_search_vector.sql applied", "005_refresh_tokens.sql    applied", "006_orders_currency.sql   pending"));
sh("sh-tsc", "npx tsc --noEmit", 2,
  "src/billing/totals.ts(14,7): error TS2322: Type 'string | undefined' is not assignable to type 'string'.");
sh("sh-eslint", "npx eslint src", 1, "src/jobs/dunning.ts\n  40:5  error  Unexpected console statement  no-console");
sh("sh-git-log-auth", "git log --oneline -n 10 -- src/auth", 0,
  lines("9c1e2f4 auth: refresh token rotation with reuse detection", "41ab7d0 auth: shorten access tokens to 15 minutes",
    "e02c5a1 auth: rate-limit failed logins"));
sh("sh-git-diff-billing", "git diff HEAD~1 -- src/billing", 0,
  "-    proration_behavior: 'none'\n+    proration_behavior: 'create_prorations'");
sh("sh-git-status", "git status --short", 0, " M src/auth/session.ts\n?? db/migrations/006_orders_currency.sql");
sh("sh-docker-ps", "docker compose ps", 0,
  lines("api            running   0.0.0.0:3000->3000/tcp", "postgres       running   5432/tcp", "redis          running   6379/tcp", "elasticsearch  exited (137)"));
sh("sh-docker-logs-api", "docker compose logs api --tail 100", 0,
  lines('{"level":50,"msg":"request failed","path":"/api/search","err":{"type":"ConnectionError","message":"connect ECONNREFUSED 172.18.0.4:9200"}}',
    '{"level":30,"msg":"POST /api/auth/login 401 12ms"}'));
sh("sh-curl-login", "curl -si -X POST localhost:3000/api/auth/login -H 'content-type: application/json' -d '{\"email\":\"dev@shopwise.test\",\"password\":\"hunter22\"}'", 0,
  "HTTP/1.1 200 OK\nset-cookie: refresh=...; Path=/api/auth; HttpOnly; Secure; SameSite=Strict\n\n{\"accessToken\":\"eyJhbGciOi...\"}");
sh("sh-curl-search", "curl -s 'localhost:3000/api/search?q=red+running+shoes'", 0,
  "{\"error\":\"INTERNAL\"}");
sh("sh-psql-null-currency", "psql $DATABASE_URL -c 'select count(*) from orders where currency is null'", 0, " count\n-------\n 1843");
sh("sh-redis-ratelimit-keys", "redis-cli --scan --pattern 'ratelimit:login:*'", 0,
  "ratelimit:login:dev@shopwise.test:127.0.0.1\nratelimit:login:ops@shopwise.test:10.0.3.7");
sh("sh-npm-outdated", "npm outdated", 1,
  lines("Package   Current  Wanted  Latest", "stripe     16.2.0  16.12.0  17.3.1", "jsonwebtoken 9.0.2 9.0.2 9.0.2"));
sh("sh-stripe-listen", "stripe listen --forward-to localhost:3000/api/billing/webhooks", 0,
  lines("Ready! Your webhook signing secret is whsec_...", "--> invoice.payment_failed [evt_1P...]", "<-- [400] POST http://localhost:3000/api/billing/webhooks"));
sh("sh-es-health", "curl -s localhost:9200/_cluster/health?pretty", 7, "", "curl: (7) Failed to connect to localhost port 9200: Connection refused");
sh("sh-node-version", "node --version && npm --version", 0, "v20.15.1\n10.7.0");

// webSearch ------------------------------------------------------------------------------
const web = (id, query, ...hits) => add(id, "webSearch", { query }, { results: hits.map(([title, url]) => ({ title, url })) });

web("ws-jwt-clock-skew", "jsonwebtoken TokenExpiredError clock skew",
  ["jwt expired right after issuing — server clocks out of sync", "https://stackoverflow.com/questions/47208125"],
  ["clockTolerance option", "https://github.com/auth0/node-jsonwebtoken#jwtverifytoken-secretorpublickey-options-callback"]);
web("ws-stripe-duplicate-events", "stripe webhook delivered twice idempotency",
  ["Handle duplicate events", "https://docs.stripe.com/webhooks#handle-duplicate-events"]);
web("ws-pg-add-not-null-column", "postgres add not null column existing rows",
  ["Add NOT NULL column to a table with data", "https://dba.stackexchange.com/questions/8814"]);
web("ws-es-fuzzy-slow", "elasticsearch multi_match fuzziness slow",
  ["Fuzzy queries are slow on large indices", "https://discuss.elastic.co/t/fuzzy-query-performance/12345"]);
web("ws-bullmq-stalled", "bullmq job stalled more than allowable limit",
  ["Stalled jobs", "https://docs.bullmq.io/guide/workers/stalled-jobs"]);

// A few more reads an agent makes around the same tasks.
read("read-auth-cookies", "src/auth/cookies.ts",
  "export function setRefreshCookie(res, token) { res.cookie('refresh', token, { httpOnly: true, secure: true, sameSite: 'strict', path: '/api/auth', maxAge: 30 * 86400_000 }); }");
read("read-api-auth-routes", "src/api/routes/auth.ts",
  "router.post('/login', rateLimitLogin, async (req, res) => { ... });",
  "router.post('/refresh', async (req, res) => { const { access, refresh } = await rotateRefreshToken(req.cookies.refresh); ... });",
  "router.post('/logout', requireAuth, async (req, res) => { await revokeFamily(req.user.fid); res.clearCookie('refresh'); res.sendStatus(204); });");
read("read-billing-totals", "src/billing/totals.ts",
  "export function orderTotal(items: LineItem[], coupon?: Coupon, vat = 0) {",
  "  const subtotal = items.reduce((s, i) => s + i.unitCents * i.quantity, 0);",
  "  const discount = coupon ? Math.min(subtotal, coupon.percentOff ? Math.round(subtotal * coupon.percentOff / 100) : coupon.amountOffCents) : 0;",
  "  return subtotal - discount + Math.round((subtotal - discount) * vat);",
  "}");
read("read-search-mappings", "src/search/mappings.ts",
  "export const productMappings = { properties: { name: { type: 'text', analyzer: 'apparel' }, name_suggest: { type: 'completion' }, price_cents: { type: 'integer' } } };");
read("read-jobs-send-invoices", "src/jobs/send-invoices.ts",
  "export async function sendMonthlyInvoices() { for (const inv of await dueInvoices()) await jobs.add('email-invoice', { id: inv.id }); }");
read("read-test-refresh", "tests/auth/refresh.test.ts",
  "it('revokes the whole family when a rotated token is reused', async () => { ... expect(await rotateRefreshToken(old)).rejects.toMatchObject({ code: 'REFRESH_REUSED' }); });");
read("read-test-oauth", "tests/auth/oauth.test.ts",
  "it('rejects a callback whose state does not match', async () => { ... });");
read("read-api-admin-routes", "src/api/routes/admin.ts",
  "router.use(requireAuth, requirePermission('admin:*'));", "router.post('/reindex', async (_req, res) => { await jobs.add('reindex-all', {}); res.sendStatus(202); });");
read("read-web-cart-drawer", "web/src/components/CartDrawer.tsx",
  "export function CartDrawer() { const { items, total } = useCart(); return <aside>{items.map(...)}<PriceTag cents={total} /></aside>; }");
read("read-web-price-tag", "web/src/components/PriceTag.tsx",
  "export const PriceTag = ({ cents, currency = 'USD' }) => <span>{formatPrice(cents, currency)}</span>;");
read("read-deploy-workflow", ".github/workflows/deploy.yml",
  "on: { push: { tags: ['v*'] } }", "jobs: { deploy: { steps: [docker build, docker push ghcr.io/shopwise/api, kubectl rollout restart deploy/api] } }");
read("read-db-paginate", "src/db/paginate.ts",
  "export async function paginate(query, { after, limit = 50 }) { /* keyset on (created_at, id) */ }");
read("read-lib-errors", "src/lib/errors.ts",
  "export class AppError extends Error { constructor(public code: string, public status = 500) { super(code); } }",
  "export class AuthError extends AppError {}", "export class BillingError extends AppError {}");
read("read-lib-flags", "src/lib/flags.ts",
  "const FLAGS = { newCheckout: { rollout: 0.25 }, searchV2: { rollout: 0 } };", "export const isEnabled = (flag, user) => ...");

const out = new URL("./corpus.json", import.meta.url);
writeFileSync(out, `${JSON.stringify(records, null, 1)}\n`);
const ids = new Set(records.map((r) => r.id));
if (ids.size !== records.length) throw new Error("duplicate ids");
console.log(`${records.length} records → ${out.pathname}`);
