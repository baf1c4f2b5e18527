package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

const apikeyUsage = `usage: hangar apikey <create|list|revoke> [flags]

  create --name NAME [--scope S]
                       make a key for the backend NAME and print it (once: only its hash is kept);
                       --scope server: it also acts for the backend's players (by external id),
                       --scope admin: it signs out, suspends and reinstates any player (repeatable)
  list                 list the keys: id, name, scopes, created, revoked
  revoke --id ID       revoke a key: calls with it fail at once

Keys of one name are one backend and share its players, so a key is
rotated by creating another with the same name and revoking the old one.
The database flags (--database-url, --data-dir) are those of hangar serve.
`

// apikeyMain runs `hangar apikey …` on the store the flags name (migrating
// it first, as serve does).
func apikeyMain(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stdout, apikeyUsage)
		return flag.ErrHelp
	}
	fs := flag.NewFlagSet("apikey "+args[0], flag.ContinueOnError)
	dbURL, dataDir := storeFlags(fs)
	var name, id string
	var scopes []string
	switch args[0] {
	case "create":
		fs.StringVar(&name, "name", "", "the backend's name (required)")
		fs.Func("scope", "a scope of the key: server or admin (repeatable)", func(s string) error {
			scopes = append(scopes, s)
			return nil
		})
	case "list":
	case "revoke":
		fs.StringVar(&id, "id", "", "the key's id, k_… (required)")
	default:
		fmt.Fprint(stdout, apikeyUsage)
		return fmt.Errorf("unknown apikey command %q", args[0])
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	ctx := context.Background()
	st, _, err := server.OpenStore(ctx, server.Config{DatabaseURL: *dbURL, DataDir: *dataDir})
	if err != nil {
		return err
	}
	defer st.Close()
	now := time.Now()
	switch args[0] {
	case "create":
		if name == "" {
			return errors.New("apikey create needs --name")
		}
		key, k, err := service.CreateAPIKey(ctx, st, name, now, scopes...)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "id: %s\nname: %s\n", k.ID, k.Name)
		if len(k.Scopes) > 0 {
			fmt.Fprintf(stdout, "scopes: %s\n", strings.Join(k.Scopes, " "))
		}
		fmt.Fprintf(stdout, "key: %s\n", key)
		fmt.Fprintln(stdout, "Store the key now: it is not shown again. Send it as authorization: Bearer <key>.")
	case "list":
		ks, err := st.APIKeys(ctx)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tNAME\tSCOPES\tCREATED\tREVOKED")
		for _, k := range ks {
			revoked, scopes := "-", "-"
			if !k.Revoked.IsZero() {
				revoked = k.Revoked.UTC().Format(time.RFC3339)
			}
			if len(k.Scopes) > 0 {
				scopes = strings.Join(k.Scopes, ",")
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, scopes, k.Created.UTC().Format(time.RFC3339), revoked)
		}
		return w.Flush()
	case "revoke":
		if id == "" {
			return errors.New("apikey revoke needs --id")
		}
		if err := st.RevokeAPIKey(ctx, id, now); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", id)
	}
	return nil
}
