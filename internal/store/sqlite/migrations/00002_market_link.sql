-- +goose Up
-- One marketplace link per account: the marketplace user it bids as and
-- that user's refresh token, sealed (AES-GCM) by the server key. The store
-- never sees the plaintext.
CREATE TABLE market_links (
    account_id       INTEGER PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    market           TEXT    NOT NULL,
    market_user      TEXT    NOT NULL,
    sealed_token     BLOB    NOT NULL,
    token_expires_ms INTEGER NOT NULL DEFAULT 0,
    linked_ms        INTEGER NOT NULL
);

-- +goose Down
DROP TABLE market_links;
