-- +goose Up
-- getEvents pages an account's events newest first; without this index
-- the read walked every account's newer events to find one account's
-- (issue 12: 4.7 ms per page of a quiet account behind 100,000 others').
CREATE INDEX events_account ON events (account_id, id);

-- +goose Down
DROP INDEX events_account;
