-- The app's schema. Idempotent: the migrate step runs at every start.
CREATE TABLE IF NOT EXISTS greetings (
    id   integer PRIMARY KEY,
    text text NOT NULL
);
INSERT INTO greetings VALUES (1, 'hello from PostgreSQL') ON CONFLICT (id) DO NOTHING;
\echo migrate: schema is up to date
