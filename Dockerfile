# syntax=docker/dockerfile:1
#
# Production image of the Partner Payments API. One image, three commands (see docker-compose.yml):
#   npm run api                  HTTP API (Koa)
#   npm run worker               Temporal worker (workflows + activities)
#   npx tsx scripts/migrate.ts   one-shot: applies prisma/migrations to DATABASE_URL
# PostgreSQL (DATABASE_URL) and Temporal (TEMPORAL_ADDRESS) are external services here; nothing
# embedded (no scripts/setup.mjs) runs in the container.

ARG NODE_IMAGE=node:20-bookworm-slim

# --- build: all dependencies, generated Prisma client ------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The lockfile lacks other platforms' optional packages (the registry it was made against does not
# serve them), which `npm ci` refuses; `npm install --no-save` then installs the same locked tree.
RUN npm ci --no-audit --no-fund || npm install --no-save --no-audit --no-fund
COPY prisma.config.ts ./
COPY prisma ./prisma
# prisma-client generator: no engine is needed to generate; these keep `generate` offline-safe.
RUN PRISMA_ENGINES_CHECKSUM_IGNORE_MISSING=1 PRISMA_SCHEMA_ENGINE_BINARY=/bin/false \
    CHECKPOINT_DISABLE=1 npx prisma generate

# --- runtime: production dependencies only ---------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN (npm ci --omit=dev --no-audit --no-fund || npm install --no-save --omit=dev --no-audit --no-fund) \
    && npm cache clean --force
COPY tsconfig.json prisma.config.ts ./
COPY prisma ./prisma
COPY config ./config
COPY contracts ./contracts
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
COPY scripts ./scripts
COPY --from=build /app/src/generated ./src/generated
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
ENV HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/app/.data
EXPOSE 3000
CMD ["npm", "run", "api"]
