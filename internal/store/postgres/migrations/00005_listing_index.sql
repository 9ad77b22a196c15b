-- +goose Up
-- getUserItems walks the account's snipes by end time; with the listing's
-- filter columns (bid, ended flag, outcome) in the index, the filter and
-- the total's COUNT read the index instead of every row (issue 12). It
-- replaces snipes_account_end, a prefix of it.
CREATE INDEX snipes_account_list ON snipes (account_id, item_end_ms, item_no, bid_cents, item_ended, outcome);
DROP INDEX snipes_account_end;

-- +goose Down
CREATE INDEX snipes_account_end ON snipes (account_id, item_end_ms, item_no);
DROP INDEX snipes_account_list;
