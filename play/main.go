package play

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Main is `hangar play`: it parses the command's flags (args, without the
// command's name) and runs the client on stdin and stdout until the match
// ends or the process is told to stop.
func Main(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("play", flag.ContinueOnError)
	fs.SetOutput(stdout)
	cfg := Config{In: stdin, Out: stdout}
	fs.StringVar(&cfg.Addr, "addr", cmp.Or(os.Getenv("HANGAR_ADDR"), "127.0.0.1:7350"), "the server's gRPC address (env HANGAR_ADDR)")
	fs.StringVar(&cfg.Name, "name", os.Getenv("USER"), "display name of the player this client registers when it has no token")
	fs.StringVar(&cfg.Token, "token", os.Getenv("HANGAR_TOKEN"), "bearer token to play with (env HANGAR_TOKEN); empty: the kept one, else a new player's")
	tokenFile := fs.String("token-file", "", "where to keep the token of the player this client registers (default: per server and name under the user's config directory)")
	fs.BoolVar(&cfg.Create, "create", false, "create a match")
	fs.StringVar(&cfg.Game, "game", "aeroplane", "with -create: the name of a game the server hosts (aeroplane, carcassonne, …; GameService.ListGames lists them)")
	fs.IntVar(&cfg.Seats, "seats", 2, "with -create: number of seats")
	fs.IntVar(&cfg.Bots, "bots", 0, "with -create: how many of the seats bots take")
	fs.BoolVar(&cfg.AutoRoll, "auto-roll", false, "with -create (Aeroplane Chess): the server rolls each seat's die when its turn comes; the players only choose moves")
	fs.StringVar(&cfg.Join, "join", "", "join (or resume) the match of this id")
	fs.StringVar(&cfg.Watch, "watch", "", "watch the match of this id")
	fs.BoolVar(&cfg.Rematch, "rematch", false, "after the end, stay for a rematch (type rematch to offer one) and follow into it")
	fs.BoolVar(&cfg.Generic, "generic", false, "show the game as for a game this client does not draw: its state and events as protobuf JSON, its legal actions as numbered choices")
	useTLS := fs.Bool("tls", false, "dial the server over TLS (system roots, or -tls-ca)")
	tlsCA := fs.String("tls-ca", "", "with -tls: PEM file of the CA that signed the server's certificate")
	colour := fs.Bool("color", os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb", "draw in colour (off when NO_COLOR is set)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	cfg.Colour = *colour
	if *useTLS || *tlsCA != "" {
		cfg.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
		if *tlsCA != "" {
			pem, err := os.ReadFile(*tlsCA)
			if err != nil {
				return err
			}
			cfg.TLS.RootCAs = x509.NewCertPool()
			if !cfg.TLS.RootCAs.AppendCertsFromPEM(pem) {
				return fmt.Errorf("no certificate in %s", *tlsCA)
			}
		}
	}
	if cfg.Name == "" {
		cfg.Name = "player"
	}
	cfg.TokenFile = *tokenFile
	if cfg.TokenFile == "" && cfg.Token == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return errors.New("no config directory to keep the token in: pass -token or -token-file")
		}
		cfg.TokenFile = TokenFile(dir, cfg.Addr, cfg.Name)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err := Run(ctx, cfg)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
