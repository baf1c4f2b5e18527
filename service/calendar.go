package service

import (
	"context"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// calendarServer implements hangarv1.CalendarServiceServer over package
// calendar.
type calendarServer struct {
	hangarv1.UnimplementedCalendarServiceServer
	*Service
}

// GetCalendar implements hangarv1.CalendarServiceServer.
func (s *calendarServer) GetCalendar(ctx context.Context, _ *hangarv1.GetCalendarRequest) (*hangarv1.GetCalendarResponse, error) {
	id, err := me(ctx)
	var c *hangarv1.Calendar
	if err == nil {
		c, err = s.calendars.Get(ctx, id)
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.GetCalendarResponse{Calendar: c}, nil
}

// SetTimeZone implements hangarv1.CalendarServiceServer.
func (s *calendarServer) SetTimeZone(ctx context.Context, req *hangarv1.SetTimeZoneRequest) (*hangarv1.SetTimeZoneResponse, error) {
	id, err := me(ctx)
	var c *hangarv1.Calendar
	if err == nil {
		c, err = s.calendars.SetZone(ctx, id, req.GetTimeZone())
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.SetTimeZoneResponse{Calendar: c}, nil
}

// StartVacation implements hangarv1.CalendarServiceServer.
func (s *calendarServer) StartVacation(ctx context.Context, req *hangarv1.StartVacationRequest) (*hangarv1.StartVacationResponse, error) {
	id, err := me(ctx)
	var c *hangarv1.Calendar
	if err == nil {
		c, err = s.calendars.Start(ctx, id, req.GetDays(), req.GetRequestId())
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.StartVacationResponse{Calendar: c}, nil
}

// EndVacation implements hangarv1.CalendarServiceServer.
func (s *calendarServer) EndVacation(ctx context.Context, _ *hangarv1.EndVacationRequest) (*hangarv1.EndVacationResponse, error) {
	id, err := me(ctx)
	var c *hangarv1.Calendar
	if err == nil {
		c, err = s.calendars.End(ctx, id)
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.EndVacationResponse{Calendar: c}, nil
}
