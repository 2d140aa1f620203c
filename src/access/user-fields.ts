import { badRequest } from '../gateway/errors.js';

const USERNAME = /^[A-Za-z0-9_.@-]{1,64}$/;

export function validateUsername(name: string): void {
  if (!USERNAME.test(name))
    throw badRequest('username: 1..64 characters of letters, digits, _ . @ -', 'username');
}

export function validatePassword(pw: string): void {
  if (pw.length < 8 || pw.length > 256) throw badRequest('password: must be 8..256 characters', 'password');
}
