DROP TABLE vacations;
DROP TABLE player_calendars;
