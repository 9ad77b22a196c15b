-- +goose Up
-- Notification targets. The URL may carry credentials and the webhook
-- secret must stay usable for signing, so both are sealed (AES-GCM with
-- the server's secret key, package secret); only a masked URL is clear.
CREATE TABLE notifiers (
    id              BIGSERIAL PRIMARY KEY,
    account_id      BIGINT  NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    kind            TEXT    NOT NULL,
    url_sealed      BYTEA   NOT NULL,
    secret_sealed   BYTEA   NOT NULL,
    url_masked      TEXT    NOT NULL,
    events          TEXT    NOT NULL DEFAULT '',
    created_ms      BIGINT  NOT NULL,
    disabled_ms     BIGINT  NOT NULL DEFAULT 0,
    disabled_reason TEXT    NOT NULL DEFAULT '',
    failures        BIGINT  NOT NULL DEFAULT 0,
    last_ms         BIGINT  NOT NULL DEFAULT 0,
    last_status     TEXT    NOT NULL DEFAULT '',
    last_error      TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX notifiers_account ON notifiers (account_id);

-- The outbox: written in the transaction of the change that causes it.
-- dedup is NULL or a key unique in the account. The indexes are kept few
-- because a snipe's placement writes one row on the sniper's path: pruning
-- goes by created_ms, and only keyed events need the unique index.
CREATE TABLE events (
    id         BIGSERIAL PRIMARY KEY,
    account_id BIGINT  NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    type       TEXT    NOT NULL,
    data       TEXT    NOT NULL,
    created_ms BIGINT  NOT NULL,
    dedup      TEXT
);
CREATE UNIQUE INDEX events_dedup ON events (account_id, dedup) WHERE dedup IS NOT NULL;
CREATE INDEX events_created ON events (created_ms);

-- One row per event and target, fanned out when the event is written.
CREATE TABLE deliveries (
    event_id    BIGINT  NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    notifier_id BIGINT  NOT NULL REFERENCES notifiers (id) ON DELETE CASCADE,
    state       TEXT    NOT NULL DEFAULT 'pending',
    attempts    BIGINT  NOT NULL DEFAULT 0,
    next_ms     BIGINT  NOT NULL,
    last_error  TEXT    NOT NULL DEFAULT '',
    done_ms     BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (event_id, notifier_id)
);
CREATE INDEX deliveries_due ON deliveries (state, next_ms);
CREATE INDEX deliveries_notifier ON deliveries (notifier_id, state);

-- Per-account notification state: link_broken is 1 from the first
-- market.link_broken event until the marketplace accepts a bid again.
CREATE TABLE notify_accounts (
    account_id  BIGINT  PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    link_broken BIGINT  NOT NULL DEFAULT 0
);

ALTER TABLE searches ADD COLUMN last_run_ms BIGINT  NOT NULL DEFAULT 0;
ALTER TABLE searches ADD COLUMN next_run_ms BIGINT  NOT NULL DEFAULT 0;
ALTER TABLE searches ADD COLUMN new_count BIGINT  NOT NULL DEFAULT 0;
CREATE INDEX searches_next_run ON searches (next_run_ms);

-- Items a saved search has already seen; baseline marks those its first
-- run found (listed before the search was saved, never reported).
CREATE TABLE search_seen (
    search_id BIGINT  NOT NULL REFERENCES searches (id) ON DELETE CASCADE,
    item_no   BIGINT  NOT NULL,
    seen_ms   BIGINT  NOT NULL,
    baseline  BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (search_id, item_no)
);

-- +goose Down
DROP TABLE search_seen;
DROP INDEX searches_next_run;
ALTER TABLE searches DROP COLUMN new_count;
ALTER TABLE searches DROP COLUMN next_run_ms;
ALTER TABLE searches DROP COLUMN last_run_ms;
DROP TABLE notify_accounts;
DROP TABLE deliveries;
DROP TABLE events;
DROP TABLE notifiers;
