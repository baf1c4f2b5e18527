package limit

// Chat takes a token of player's chat bucket (Limits.ChatRate); it returns
// a *RateLimited when none is left.
func (l *Limiter) Chat(player string) error {
	if l.chat == nil {
		return nil
	}
	if d := l.chat.take(player, l.now()); d > 0 {
		return &RateLimited{Scope: "player", Delay: d}
	}
	return nil
}

// Watchers returns the players that hold watch streams on this node.
func (l *Limiter) Watchers() []string {
	l.watchMu.Lock()
	defer l.watchMu.Unlock()
	out := make([]string, 0, len(l.watches))
	for p := range l.watches {
		out = append(out, p)
	}
	return out
}

// Watching reports whether player p holds a watch stream on the node.
func (l *Limiter) Watching(p string) bool {
	l.watchMu.Lock()
	defer l.watchMu.Unlock()
	return l.watches[p] > 0
}
