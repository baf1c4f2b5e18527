package server

import (
	"context"
	"time"

	"github.com/hangarhq/hangar/archive"
	"github.com/hangarhq/hangar/service"
)

var (
	_ service.Archiver      = archive.Dir("")
	_ service.ArchiveReader = archive.Dir("")
)

// DefaultArchiveOlderThan is the age past which matches are archived by
// default: 30 days after they ended.
const DefaultArchiveOlderThan = 30 * 24 * time.Hour

// Archive runs one archive on the store cfg names (migrating it first, as a
// node does) into a; it returns what it archived and the store's name.
func Archive(ctx context.Context, cfg Config, a service.Archiver, o service.ArchiveOptions, opts ...Option) (service.ArchiveReport, string, error) {
	var r service.ArchiveReport
	name, err := offline(ctx, cfg, opts, func(svc *service.Service) (err error) {
		r, err = svc.Archive(ctx, a, o)
		return err
	})
	return r, name, err
}

// Restore puts the archived matches o names back from a into the store cfg
// names (migrating it first, as a node does: a fresh database gets its
// schema); it returns what it did and the store's name.
func Restore(ctx context.Context, cfg Config, a service.ArchiveReader, o service.RestoreOptions, opts ...Option) (service.RestoreReport, string, error) {
	var r service.RestoreReport
	name, err := offline(ctx, cfg, opts, func(svc *service.Service) (err error) {
		r, err = svc.Restore(ctx, a, o)
		return err
	})
	return r, name, err
}

// offline runs fn with a service on the store cfg names, without serving,
// and returns the store's name.
func offline(ctx context.Context, cfg Config, opts []Option, fn func(*service.Service) error) (string, error) {
	s, err := New(cfg, opts...)
	if err != nil {
		return "", err
	}
	st, name, err := openStore(ctx, s.cfg, nil)
	if err != nil {
		return "", err
	}
	defer st.Close()
	svc := service.New(st, s.log, service.Options{Games: s.games})
	defer svc.Close()
	return name, fn(svc)
}

// DefaultArchiveEvery is how often a node that archives runs.
const DefaultArchiveEvery = time.Hour

// startArchiver, when the node archives (Config.ArchiveDir or Archiver),
// runs an archive at start and then every ArchiveEvery until ctx ends. Each
// run forgets the matches it archived from the node's memory.
func (m *Server) startArchiver(ctx context.Context) {
	a := m.cfg.Archiver
	if a == nil && m.cfg.ArchiveDir != "" {
		a = archive.Dir(m.cfg.ArchiveDir)
	}
	if a == nil {
		return
	}
	every := m.cfg.ArchiveEvery
	if every <= 0 {
		every = DefaultArchiveEvery
	}
	olderThan := m.cfg.ArchiveOlderThan
	if olderThan <= 0 {
		olderThan = DefaultArchiveOlderThan
	}
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			r, err := m.svc.Archive(ctx, a, service.ArchiveOptions{OlderThan: olderThan})
			if ctx.Err() != nil {
				return
			}
			switch {
			case err != nil:
				m.log.Warn("archive run stopped; the next run resumes", "err", err, "archived", r.Matches)
			case r.Matches > 0:
				m.log.Info("archived matches", "matches", r.Matches, "bytes", r.Bytes, "raced", r.Raced)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}
