-- +goose Up
-- Coordination of sniper instances sharing one database (docs/architecture.md,
-- "Several instances"). Times are Unix milliseconds on the database's clock.
CREATE TABLE sniper_instances (
    id         TEXT    NOT NULL PRIMARY KEY,
    partitions INTEGER NOT NULL,
    addr       TEXT    NOT NULL DEFAULT '',
    started_ms BIGINT  NOT NULL,
    expires_ms BIGINT  NOT NULL
);

-- One row per partition of the work (account_id mod K), created by its
-- first holder. epoch is the fencing token: it grows on every change of
-- holder and is never reset.
CREATE TABLE sniper_leases (
    part       INTEGER NOT NULL PRIMARY KEY,
    holder     TEXT    NOT NULL DEFAULT '',
    epoch      BIGINT  NOT NULL DEFAULT 0,
    expires_ms BIGINT  NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE sniper_leases;
DROP TABLE sniper_instances;
