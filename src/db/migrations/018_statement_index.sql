-- The panel's Extrato pages a seller's postings newest first and sums the lines above a page: both
-- walk a seller's journal lines in posting order, which (seller_id, id) does not give the planner.
CREATE INDEX journal_lines_seller_posting_idx ON journal_lines (seller_id, posting_id) WHERE seller_id IS NOT NULL
