# syntax=docker/dockerfile:1
#
# Production image of the Partner Payments API. It runs what `npm run build` compiled (dist/, no tsx),
# and the worker loads the workflow bundle built here (dist/workflow-bundle.js), so a workflow that
# does not bundle fails this build, not a deployment. One image, three commands (docker-compose.yml):
#   node dist/src/main.js --only api      HTTP API (Koa), the default
#   node dist/src/main.js --only worker   Temporal worker (workflows + activities)
#   node dist/scripts/migrate.js          one-shot: applies prisma/migrations to DATABASE_URL
# PostgreSQL (DATABASE_URL) and Temporal (TEMPORAL_ADDRESS) are external services here; nothing
# embedded (no scripts/setup.mjs) runs in the container. The image is production (DEPLOYMENT): the
# worker needs the custody seed from outside (CUSTODY_MNEMONIC_FILE, a mounted secret) and never makes
# one; the API needs only the extended public keys (CUSTODY_PUBLIC_KEYS).

ARG NODE_IMAGE=node:20-bookworm-slim

# --- build: all dependencies, generated Prisma client, tsc into dist/, workflow bundle -------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY prisma.config.ts ./
COPY prisma ./prisma
# prisma-client generator: no engine is needed to generate; these keep `generate` offline-safe.
RUN PRISMA_ENGINES_CHECKSUM_IGNORE_MISSING=1 PRISMA_SCHEMA_ENGINE_BINARY=/bin/false \
    CHECKPOINT_DISABLE=1 npx prisma generate
COPY tsconfig.json tsconfig.build.json ./
COPY config ./config
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
COPY scripts ./scripts
RUN npm run build

# --- runtime: production dependencies, dist/ and the files dist/ reads -----------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
# config/: environments.json and toolchain.json (with package.json it marks the project root that
# dist/ looks up); prisma/migrations: the migrate command; contracts/: the sandbox token (embedded only).
COPY config ./config
COPY prisma/migrations ./prisma/migrations
COPY contracts ./contracts
# public/: the hosted checkout's script and stylesheet (served from /checkout/assets/) and the partner
# dashboard's live finality script (/dashboard/assets/).
COPY public ./public
COPY --from=build /app/dist ./dist
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
ENV HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/app/.data \
    DEPLOYMENT=production
EXPOSE 3000
CMD ["node", "dist/src/main.js", "--only", "api"]
