DROP TABLE ticket_groups;
DROP TABLE tickets;
DROP TABLE ticket_pools;
