-- +goose Up
CREATE TABLE accounts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT    NOT NULL UNIQUE,
    tier       TEXT    NOT NULL,
    key_hash   BLOB    NOT NULL UNIQUE,
    created_ms INTEGER NOT NULL
);

CREATE TABLE bid_groups (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name       TEXT    NOT NULL,
    UNIQUE (account_id, name)
);

CREATE TABLE snipes (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id       INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    item_no          INTEGER NOT NULL,
    bid_cents        INTEGER NOT NULL DEFAULT 0,
    delay_s          INTEGER NOT NULL DEFAULT 7,
    enabled          INTEGER NOT NULL DEFAULT 1,
    forced           INTEGER NOT NULL DEFAULT 0,
    group_id         INTEGER REFERENCES bid_groups (id) ON DELETE SET NULL,
    state            TEXT    NOT NULL DEFAULT 'scheduled',
    outcome          INTEGER NOT NULL DEFAULT 0,
    outcome_detail   TEXT    NOT NULL DEFAULT '',
    fire_at_ms       INTEGER NOT NULL,
    placed_at_ms     INTEGER NOT NULL DEFAULT 0,
    item_title       TEXT    NOT NULL DEFAULT '',
    item_currency    TEXT    NOT NULL DEFAULT '',
    item_price_cents INTEGER NOT NULL DEFAULT 0,
    item_bids        INTEGER NOT NULL DEFAULT 0,
    item_gallery_url TEXT    NOT NULL DEFAULT '',
    item_start_ms    INTEGER NOT NULL DEFAULT 0,
    item_end_ms      INTEGER NOT NULL,
    item_ended       INTEGER NOT NULL DEFAULT 0,
    created_ms       INTEGER NOT NULL,
    updated_ms       INTEGER NOT NULL,
    UNIQUE (account_id, item_no)
);

-- The sniper's scan for due snipes.
CREATE INDEX snipes_state_fire_at ON snipes (state, fire_at_ms);
-- getUserItems ordered by end time, item_no breaking ties.
CREATE INDEX snipes_account_end ON snipes (account_id, item_end_ms, item_no);
-- Bid Group members, in firing order.
CREATE INDEX snipes_account_group ON snipes (account_id, group_id, item_end_ms, item_no);
-- ON DELETE SET NULL from bid_groups looks snipes up by group.
CREATE INDEX snipes_group ON snipes (group_id);

CREATE TABLE searches (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    query      TEXT    NOT NULL,
    created_ms INTEGER NOT NULL,
    UNIQUE (account_id, query)
);

-- +goose Down
DROP TABLE searches;
DROP TABLE snipes;
DROP TABLE bid_groups;
DROP TABLE accounts;
