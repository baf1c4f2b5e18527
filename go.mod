module github.com/hangarhq/hangar

go 1.26.8
